//! kcr-protobuf's decoders under libFuzzer: any bytes as an object body, a list body, a watch
//! stream and a watch frame, decoded into JSON values and into k8s-openapi types whose tables
//! use every field kind (maps of messages, either-messages, doubles, recursive schemas). Bad
//! input must give a typed error, never a panic, an overflowed stack or a hang.

#![no_main]

use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::resource::v1::ResourceSlice;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kcr_protobuf::{DecodeOptions, Schema, list, message, object, watch};
use serde_json::Value;

fn object(body: &[u8]) {
    for options in [
        DecodeOptions::default(),
        DecodeOptions::default().skip_managed_fields(true),
    ] {
        let _ = object::decode::<Value>(body, options);
        let _ = object::decode::<Pod>(body, options);
        let _ = object::decode::<Service>(body, options);
        let _ = object::decode::<CustomResourceDefinition>(body, options);
        let _ = object::decode::<ResourceSlice>(body, options);
    }
    let _ = object::to_json(body);
}

fn list(body: &[u8]) {
    let _ = list::decode::<Value>(body, DecodeOptions::default());
    let _ = list::decode::<Pod>(body, DecodeOptions::default());
    let _ = list::decode::<CustomResourceDefinition>(body, DecodeOptions::default());
    if let Ok(parts) = list::messages(body)
        && let Some(schema) = Schema::for_list_item(&parts.api_version, &parts.kind)
    {
        for item in parts.items {
            let _ = message::to_json(item, schema);
        }
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    object(data);
    list(data);
    // A watch stream: frames, each a watch event around an object body.
    let mut frames = watch::FrameReader::new(1 << 20);
    frames.push(data);
    while let Ok(Some(frame)) = frames.next_frame() {
        if let Ok(event) = watch::decode_event(&frame) {
            object(event.object);
        }
    }
    let _ = frames.finish();
    if let Ok(event) = watch::decode_event(data) {
        object(event.object);
    }
});
