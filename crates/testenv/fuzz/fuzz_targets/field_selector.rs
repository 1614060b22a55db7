//! `kcr_testenv::fuzz::field_selector` under libFuzzer.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kcr_testenv::fuzz::field_selector(data));
