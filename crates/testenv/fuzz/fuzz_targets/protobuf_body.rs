//! `kcr_testenv::fuzz::protobuf_body` under libFuzzer.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kcr_testenv::fuzz::protobuf_body(data));
