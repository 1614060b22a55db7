//! kcr-testenv's protobuf encoder checked against a real kube-apiserver's bytes: every list of
//! kcr-protobuf's differential oracle (`crates/protobuf/tests/data/wire/`, recorded from
//! kube-apiserver v1.36.2 in JSON and in protobuf) is encoded from its JSON objects as
//! kcr-testenv encodes a stored object and a list page (`kcr_protobuf::message::encode` per
//! object, `list::encode_messages` around them). The encoding must decode to the same
//! objects, and be byte-equal to what the server sent: Go's encoding is deterministic (the
//! fixtures' README: every list re-encodes byte-identically in Go).

use std::path::PathBuf;

use kcr_protobuf::{DecodeOptions, Schema, list, message};
use serde_json::Value;

fn wire_dir() -> PathBuf {
    [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "protobuf",
        "tests",
        "data",
        "wire",
    ]
    .iter()
    .collect()
}

fn read(name: &str) -> Vec<u8> {
    let path = wire_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The file stems of every list pair.
fn stems() -> Vec<String> {
    let index: Value = serde_json::from_slice(&read("index.json")).unwrap();
    index["lists"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["file"].as_str().unwrap().to_owned())
        .collect()
}

/// The README's one expected difference: protobuf has no `TypeMeta` for a StatefulSet's
/// `volumeClaimTemplates`, so their `apiVersion` and `kind` are in JSON only (and the encoder
/// must drop them to write what the server wrote).
fn without_type_meta_of_templates(stem: &str, item: &mut Value) {
    if stem != "apps_v1_statefulsets" {
        return;
    }
    if let Some(templates) = item
        .pointer_mut("/spec/volumeClaimTemplates")
        .and_then(Value::as_array_mut)
    {
        for t in templates {
            let t = t.as_object_mut().unwrap();
            assert_eq!(t.remove("apiVersion"), Some(Value::from("v1")));
            assert_eq!(t.remove("kind"), Some(Value::from("PersistentVolumeClaim")));
        }
    }
}

/// The one known difference: a `managedFields[].fieldsV1` is raw JSON whose keys
/// structured-merge-diff orders by value (`k:{"port":80,...}` before `k:{"port":443,...}`), and
/// `serde_json::Value` (the JSON form kcr-testenv stores) keeps object keys sorted as strings.
/// The lists where that order differs are named here; their items must be byte-equal once
/// each `fieldsV1`'s keys are sorted.
const KEY_ORDER_OF_FIELDS_V1: &[&str] = &["core_v1_services"];

fn varint(b: &[u8], i: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let byte = b[*i];
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        shift += 7;
        if byte < 0x80 {
            return v;
        }
    }
}

fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Rewrites the length-delimited fields of a message found at `path` (field numbers) with
/// `f`, keeping every other byte.
fn rewrite(message: &[u8], path: &[u64], f: &dyn Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let (mut i, mut out) = (0, Vec::new());
    while i < message.len() {
        let start = i;
        let key = varint(message, &mut i);
        match key & 7 {
            0 => {
                varint(message, &mut i);
                out.extend_from_slice(&message[start..i]);
            }
            2 => {
                let len = usize::try_from(varint(message, &mut i)).unwrap();
                let data = &message[i..i + len];
                i += len;
                if key >> 3 == path[0] {
                    let inner = if path.len() == 1 {
                        f(data)
                    } else {
                        rewrite(data, &path[1..], f)
                    };
                    put_varint(key, &mut out);
                    put_varint(inner.len() as u64, &mut out);
                    out.extend_from_slice(&inner);
                } else {
                    out.extend_from_slice(&message[start..i]);
                }
            }
            1 => {
                i += 8;
                out.extend_from_slice(&message[start..i]);
            }
            5 => {
                i += 4;
                out.extend_from_slice(&message[start..i]);
            }
            other => panic!("wire type {other}"),
        }
    }
    out
}

/// An object's message with the JSON of each `metadata.managedFields[].fieldsV1.raw` (fields
/// 1, 17, 7, 1) written with sorted keys.
fn sorted_fields_v1(message: &[u8]) -> Vec<u8> {
    rewrite(message, &[1, 17, 7, 1], &|raw| {
        let v: Value = serde_json::from_slice(raw).unwrap();
        serde_json::to_vec(&v).unwrap()
    })
}

/// The first byte at which two encodings differ, with a little context.
fn first_difference(ours: &[u8], theirs: &[u8]) -> String {
    let at = ours
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    let window = |b: &[u8]| b[at.saturating_sub(8)..(at + 24).min(b.len())].to_vec();
    format!(
        "{} bytes against {}, first difference at {at}: ours {:?}, the server's {:?}",
        ours.len(),
        theirs.len(),
        String::from_utf8_lossy(&window(ours)),
        String::from_utf8_lossy(&window(theirs)),
    )
}

/// Encodes one list's JSON objects; checks the decoding and the bytes.
fn check(stem: &str) -> Result<(), String> {
    let pb = read(&format!("{stem}.pb"));
    let json: Value = serde_json::from_slice(&read(&format!("{stem}.json"))).unwrap();
    let parts = list::messages(&pb).map_err(|e| e.to_string())?;
    let schema = Schema::for_list_item(&parts.api_version, &parts.kind).ok_or("no table")?;
    let items = json["items"].as_array().ok_or("no items")?;
    let mut messages = Vec::new();
    let mut reordered = 0;
    for (i, item) in items.iter().enumerate() {
        let mut item = item.clone();
        without_type_meta_of_templates(stem, &mut item);
        let object = item.as_object().ok_or("an item is not an object")?;
        let message =
            message::encode(object, schema).map_err(|e| format!("items[{i}] encodes: {e}"))?;
        // What the encoding decodes to: the same object, in both of kcr-protobuf's decoders.
        let strict =
            message::to_json(&message, schema).map_err(|e| format!("items[{i}] decodes: {e}"))?;
        if strict != item {
            return Err(format!("items[{i}] decodes to another object"));
        }
        let serde_form: Value = message::decode(&message, schema, DecodeOptions::default())
            .map_err(|e| format!("items[{i}] decodes: {e}"))?;
        if serde_form != item {
            return Err(format!(
                "items[{i}] decodes through serde to another object"
            ));
        }
        if message != parts.items[i] && KEY_ORDER_OF_FIELDS_V1.contains(&stem) {
            // Equal once the JSON keys of each `fieldsV1` are in one order.
            if sorted_fields_v1(&message) == sorted_fields_v1(parts.items[i]) {
                reordered += 1;
                messages.push(parts.items[i].to_vec());
                continue;
            }
        }
        if message != parts.items[i] {
            return Err(format!(
                "items[{i}] is not encoded as the server encoded it: {}",
                first_difference(&message, parts.items[i])
            ));
        }
        messages.push(message);
    }
    if KEY_ORDER_OF_FIELDS_V1.contains(&stem) && reordered == 0 {
        return Err("no fieldsV1 in another key order: take the list off the exceptions".into());
    }
    let metadata = json["metadata"].as_object().ok_or("no list metadata")?;
    let body = list::encode_messages(schema, metadata, messages.iter().map(Vec::as_slice))
        .map_err(|e| format!("the list encodes: {e}"))?;
    if body != pb {
        return Err(format!(
            "the list is not encoded as the server encoded it: {}",
            first_difference(&body, &pb)
        ));
    }
    Ok(())
}

#[test]
fn every_fixture_list_should_encode_byte_for_byte_as_kube_apiserver_encodes_it() {
    let stems = stems();
    assert_eq!(stems.len(), 61);
    let failures: Vec<String> = stems
        .iter()
        .filter_map(|stem| check(stem).err().map(|e| format!("{stem}: {e}")))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} lists differ:\n{}",
        failures.len(),
        stems.len(),
        failures.join("\n")
    );
}
