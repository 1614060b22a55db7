//! `kcr_testenv::fuzz::strategic_merge_patch` under libFuzzer.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kcr_testenv::fuzz::strategic_merge_patch(data));
