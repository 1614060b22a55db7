//! `kcr_testenv::fuzz::label_selector` under libFuzzer.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kcr_testenv::fuzz::label_selector(data));
