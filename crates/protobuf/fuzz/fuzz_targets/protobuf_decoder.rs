//! kcr-protobuf's decoders under libFuzzer: any bytes as an object body, a list body, a watch
//! stream and a watch frame, decoded into JSON values and into k8s-openapi types whose tables
//! use every field kind (maps of messages, either-messages, doubles, recursive schemas). Bad
//! input must give a typed error, never a panic, an overflowed stack or a hang.

#![no_main]

use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::resource::v1::ResourceSlice;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kcr_protobuf::{
    DecodeOptions, FrameReader, decode_list, decode_object, decode_watch_event, item_schema_for,
    list_messages, message_to_json, object_to_json,
};
use serde_json::Value;

fn object(body: &[u8]) {
    for options in [
        DecodeOptions::default(),
        DecodeOptions::default().skip_managed_fields(true),
    ] {
        let _ = decode_object::<Value>(body, options);
        let _ = decode_object::<Pod>(body, options);
        let _ = decode_object::<Service>(body, options);
        let _ = decode_object::<CustomResourceDefinition>(body, options);
        let _ = decode_object::<ResourceSlice>(body, options);
    }
    let _ = object_to_json(body);
}

fn list(body: &[u8]) {
    let _ = decode_list::<Value>(body, DecodeOptions::default());
    let _ = decode_list::<Pod>(body, DecodeOptions::default());
    let _ = decode_list::<CustomResourceDefinition>(body, DecodeOptions::default());
    if let Ok(parts) = list_messages(body)
        && let Some(schema) = item_schema_for(&parts.api_version, &parts.kind)
    {
        for item in parts.items {
            let _ = message_to_json(item, schema);
        }
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    object(data);
    list(data);
    // A watch stream: frames, each a watch event around an object body.
    let mut frames = FrameReader::new(1 << 20);
    frames.push(data);
    while let Ok(Some(frame)) = frames.next_frame() {
        if let Ok(event) = decode_watch_event(&frame) {
            object(event.object);
        }
    }
    let _ = frames.finish();
    if let Ok(event) = decode_watch_event(data) {
        object(event.object);
    }
});
