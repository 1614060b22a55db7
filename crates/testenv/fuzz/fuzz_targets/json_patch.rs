//! `kcr_testenv::fuzz::json_patch` under libFuzzer.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kcr_testenv::fuzz::json_patch(data));
