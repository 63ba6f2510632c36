#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| switchboard_fuzz::sdk_webhook_verify(data));
