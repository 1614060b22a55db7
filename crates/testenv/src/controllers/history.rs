//! kube-controller-manager's `controller/history`: a StatefulSet's revisions are
//! ControllerRevisions named `<parent>-<hash>`, whose `data` is the patch that puts the
//! parent's pod template back (`{"spec":{"template":{...,"$patch":"replace"}}}`, encoded as Go's
//! `encoding/json` encodes a decoded map: keys sorted, no spaces, `<`, `>` and `&` escaped), and
//! whose hash is the 32-bit FNV-1 of those bytes followed by the decimal collision count, written
//! in decimal and then through `rand.SafeEncodeString`.

use serde_json::Value;

/// The label holding a revision's hash.
pub(super) const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// `value` encoded as Go's `json.Marshal` encodes it after `json.Unmarshal` into an
/// `interface{}`: object keys sorted, no insignificant space, HTML characters escaped.
pub(super) fn go_json(value: &Value) -> String {
    let mut out = String::new();
    encode(value, &mut out);
    out
}

fn encode(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)),
        Value::String(s) => crate::wire::go_internal::write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                crate::wire::go_internal::write_string(out, k);
                out.push(':');
                encode(&map[k], out);
            }
            out.push('}');
        }
    }
}

/// A number as Go writes a `float64` (every JSON number decodes to one).
fn go_number(n: &serde_json::Number) -> String {
    let f = n.as_f64().unwrap_or_default();
    let abs = f.abs();
    if f == f.trunc() && abs < 1e21 {
        // Integral values below 1e21 are written without a fraction or exponent.
        return format!("{f:.0}");
    }
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Go's 'e' format with a two-digit exponent at least (`1e+21`, `1e-07`).
        let s = format!("{f:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', exp),
        };
        return format!("{mantissa}e{sign}{digits:0>2}");
    }
    format!("{f}")
}

/// The 32-bit FNV-1 hash (multiply, then xor) of `data`.
fn fnv1_32(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5_u32, |h, b| {
        h.wrapping_mul(0x0100_0193) ^ u32::from(*b)
    })
}

/// `rand.SafeEncodeString`: every byte mapped into an alphabet without vowels and without
/// characters that read alike.
fn safe_encode(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|b| ALPHANUMS[usize::from(b) % ALPHANUMS.len()] as char)
        .collect()
}

/// `HashControllerRevision` of a revision whose data is `data` (its raw bytes), probed with
/// `collision_count`.
pub(super) fn hash(data: &str, collision_count: Option<i64>) -> String {
    let mut bytes = data.as_bytes().to_vec();
    if let Some(c) = collision_count {
        bytes.extend_from_slice(c.to_string().as_bytes());
    }
    safe_encode(&fnv1_32(&bytes).to_string())
}

/// `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to 223 bytes.
pub(super) fn revision_name(prefix: &str, hash: &str) -> String {
    let mut cut = prefix.len().min(223);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{hash}", &prefix[..cut])
}

/// The data of a StatefulSet's revision: the patch that restores `template`.
pub(super) fn template_patch(template: &Value) -> Value {
    let mut template = template.clone();
    if let Some(m) = template.as_object_mut() {
        m.insert("$patch".into(), Value::String("replace".into()));
    }
    serde_json::json!({"spec": {"template": template}})
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_recorded_statefulset_revision_name_should_be_computed() {
        // The template of `st-sts-scale` as stored, and the revision kube-controller-manager
        // v1.36.2 named for it.
        let template = json!({"metadata": {"labels": {"app": "s1"}}, "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": {}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}], "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst", "automountServiceAccountToken": false, "securityContext": {}, "schedulerName": "default-scheduler"}});
        let data = go_json(&template_patch(&template));
        assert_eq!(revision_name("s1", &hash(&data, Some(0))), "s1-586cf4cb6");
        assert_ne!(hash(&data, Some(1)), hash(&data, Some(0)));
        assert_ne!(hash(&data, None), hash(&data, Some(0)));
    }

    #[test]
    fn go_json_should_sort_keys_and_escape_as_go() {
        let v = json!({"b": [1, 2.5, -3], "a": "<&>\u{2028}\n\u{1}", "c": null, "d": true});
        assert_eq!(
            go_json(&v),
            r#"{"a":"\u003c\u0026\u003e\u2028\n\u0001","b":[1,2.5,-3],"c":null,"d":true}"#
        );
        assert_eq!(go_json(&json!(1e21)), "1e+21");
        assert_eq!(go_json(&json!(1e-7)), "1e-07");
        assert_eq!(go_json(&json!(0.000001)), "0.000001");
    }

    #[test]
    fn fnv1_should_match_its_reference_values() {
        assert_eq!(fnv1_32(b""), 0x811c_9dc5);
        assert_eq!(fnv1_32(b"a"), 0x050c_5d7e);
    }

    #[test]
    fn long_prefixes_should_be_cut_to_223_bytes() {
        let name = revision_name(&"x".repeat(300), "abc");
        assert_eq!(name.len(), 223 + 4);
    }
}
