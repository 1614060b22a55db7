//! Decoding of Kubernetes protobuf request bodies for a few built-in kinds, so typed kubectl
//! commands (`kubectl create configmap|secret|namespace|serviceaccount`) work: kubectl sends
//! built-in objects as `application/vnd.kubernetes.protobuf` and does not fall back to JSON.
//! The server always answers in JSON (kubectl accepts it).

use serde_json::{Map, Value, json};

/// How a field is encoded, and how it becomes JSON.
#[derive(Clone, Copy)]
enum Kind {
    Str,
    Int,
    Bool,
    Time,
    /// A `MicroTime`: always written with six digits of fractional seconds, as its JSON
    /// decoder demands.
    MicroTime,
    Msg(&'static [Field]),
    MapStr,
    MapBytes,
    RepStr,
    RepMsg(&'static [Field]),
}

type Field = (u64, &'static str, Kind);

const OWNER_REFERENCE: &[Field] = &[
    (1, "kind", Kind::Str),
    (3, "name", Kind::Str),
    (4, "uid", Kind::Str),
    (5, "apiVersion", Kind::Str),
    (6, "controller", Kind::Bool),
    (7, "blockOwnerDeletion", Kind::Bool),
];

const OBJECT_META: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "generateName", Kind::Str),
    (3, "namespace", Kind::Str),
    (5, "uid", Kind::Str),
    (6, "resourceVersion", Kind::Str),
    (7, "generation", Kind::Int),
    (8, "creationTimestamp", Kind::Time),
    (9, "deletionTimestamp", Kind::Time),
    (10, "deletionGracePeriodSeconds", Kind::Int),
    (11, "labels", Kind::MapStr),
    (12, "annotations", Kind::MapStr),
    (13, "ownerReferences", Kind::RepMsg(OWNER_REFERENCE)),
    (14, "finalizers", Kind::RepStr),
];

const CONFIG_MAP: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "data", Kind::MapStr),
    (3, "binaryData", Kind::MapBytes),
    (4, "immutable", Kind::Bool),
];

const SECRET: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "data", Kind::MapBytes),
    (3, "type", Kind::Str),
    (4, "stringData", Kind::MapStr),
    (5, "immutable", Kind::Bool),
];

const NAMESPACE_SPEC: &[Field] = &[(1, "finalizers", Kind::RepStr)];
const NAMESPACE: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "spec", Kind::Msg(NAMESPACE_SPEC)),
];

const OBJECT_REFERENCE: &[Field] = &[
    (1, "kind", Kind::Str),
    (2, "namespace", Kind::Str),
    (3, "name", Kind::Str),
    (4, "uid", Kind::Str),
    (5, "apiVersion", Kind::Str),
    (6, "resourceVersion", Kind::Str),
    (7, "fieldPath", Kind::Str),
];
const LOCAL_OBJECT_REFERENCE: &[Field] = &[(1, "name", Kind::Str)];
const SERVICE_ACCOUNT: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "secrets", Kind::RepMsg(OBJECT_REFERENCE)),
    (3, "imagePullSecrets", Kind::RepMsg(LOCAL_OBJECT_REFERENCE)),
    (4, "automountServiceAccountToken", Kind::Bool),
];

const LEASE_SPEC: &[Field] = &[
    (1, "holderIdentity", Kind::Str),
    (2, "leaseDurationSeconds", Kind::Int),
    (3, "acquireTime", Kind::MicroTime),
    (4, "renewTime", Kind::MicroTime),
    (5, "leaseTransitions", Kind::Int),
    (6, "strategy", Kind::Str),
    (7, "preferredHolder", Kind::Str),
];
const LEASE: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "spec", Kind::Msg(LEASE_SPEC)),
];

const TYPE_META: &[Field] = &[(1, "apiVersion", Kind::Str), (2, "kind", Kind::Str)];

fn schema_for(api_version: &str, kind: &str) -> Option<&'static [Field]> {
    Some(match (api_version, kind) {
        ("v1", "ConfigMap") => CONFIG_MAP,
        ("v1", "Secret") => SECRET,
        ("v1", "Namespace") => NAMESPACE,
        ("v1", "ServiceAccount") => SERVICE_ACCOUNT,
        ("coordination.k8s.io/v1", "Lease") => LEASE,
        _ => return None,
    })
}

/// A malformed or unsupported protobuf body.
#[derive(Debug)]
pub(crate) struct Unsupported(pub(crate) String);

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, Unsupported> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self
                .buf
                .get(self.pos)
                .ok_or_else(|| Unsupported("truncated varint".into()))?;
            self.pos += 1;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(Unsupported("varint too long".into()))
    }

    fn bytes(&mut self) -> Result<&'a [u8], Unsupported> {
        let len = usize::try_from(self.varint()?).map_err(|_| Unsupported("length".into()))?;
        let end = self.pos.checked_add(len).filter(|e| *e <= self.buf.len());
        let end = end.ok_or_else(|| Unsupported("truncated field".into()))?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// Reads a field: (number, wire type, varint value or length-delimited bytes).
    fn field(&mut self) -> Result<(u64, u64, u64, &'a [u8]), Unsupported> {
        let key = self.varint()?;
        let (number, wire) = (key >> 3, key & 7);
        match wire {
            0 => Ok((number, wire, self.varint()?, &[])),
            2 => Ok((number, wire, 0, self.bytes()?)),
            1 => {
                self.pos += 8;
                Ok((number, wire, 0, &[]))
            }
            5 => {
                self.pos += 4;
                Ok((number, wire, 0, &[]))
            }
            _ => Err(Unsupported(format!("unsupported wire type {wire}"))),
        }
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn text(b: &[u8]) -> Result<String, Unsupported> {
    String::from_utf8(b.to_vec()).map_err(|_| Unsupported("invalid UTF-8".into()))
}

fn map_entry(b: &[u8], bytes_value: bool) -> Result<(String, Value), Unsupported> {
    let mut r = Reader { buf: b, pos: 0 };
    let (mut key, mut value) = (String::new(), Value::String(String::new()));
    while !r.done() {
        let (n, _, _, data) = r.field()?;
        match n {
            1 => key = text(data)?,
            2 if bytes_value => value = Value::String(base64(data)),
            2 => value = Value::String(text(data)?),
            _ => {}
        }
    }
    Ok((key, value))
}

fn time(b: &[u8], micro: bool) -> Result<Value, Unsupported> {
    let mut r = Reader { buf: b, pos: 0 };
    let (mut secs, mut nanos) = (0u64, 0u64);
    while !r.done() {
        let (n, _, v, _) = r.field()?;
        match n {
            1 => secs = v,
            2 => nanos = v,
            _ => {}
        }
    }
    let base = crate::meta::rfc3339(secs);
    Ok(Value::String(if nanos == 0 && !micro {
        base
    } else {
        format!("{}.{:06}Z", base.trim_end_matches('Z'), nanos / 1000)
    }))
}

fn message(b: &[u8], schema: &[Field]) -> Result<Value, Unsupported> {
    let mut r = Reader { buf: b, pos: 0 };
    let mut out = Map::new();
    while !r.done() {
        let (n, _, v, data) = r.field()?;
        let Some((_, name, kind)) = schema.iter().find(|(num, _, _)| *num == n) else {
            continue;
        };
        let name = (*name).to_owned();
        match *kind {
            Kind::Str => {
                out.insert(name, Value::String(text(data)?));
            }
            #[allow(clippy::cast_possible_wrap)]
            Kind::Int => {
                out.insert(name, json!(v as i64));
            }
            Kind::Bool => {
                out.insert(name, Value::Bool(v != 0));
            }
            Kind::Time | Kind::MicroTime => {
                out.insert(name, time(data, matches!(kind, Kind::MicroTime))?);
            }
            Kind::Msg(s) => {
                out.insert(name, message(data, s)?);
            }
            Kind::MapStr | Kind::MapBytes => {
                let (k, val) = map_entry(data, matches!(kind, Kind::MapBytes))?;
                if let Value::Object(m) = out.entry(name).or_insert_with(|| json!({})) {
                    m.insert(k, val);
                }
            }
            Kind::RepStr => {
                if let Value::Array(a) = out.entry(name).or_insert_with(|| json!([])) {
                    a.push(Value::String(text(data)?));
                }
            }
            Kind::RepMsg(s) => {
                let item = message(data, s)?;
                if let Value::Array(a) = out.entry(name).or_insert_with(|| json!([])) {
                    a.push(item);
                }
            }
        }
    }
    Ok(Value::Object(out))
}

/// Decodes a `application/vnd.kubernetes.protobuf` body (`k8s\0` + `runtime.Unknown`) of a
/// supported kind into its JSON form.
pub(crate) fn decode(body: &[u8]) -> Result<Value, Unsupported> {
    let rest = body
        .strip_prefix(b"k8s\x00")
        .ok_or_else(|| Unsupported("missing the k8s protobuf prefix".into()))?;
    let mut r = Reader { buf: rest, pos: 0 };
    let (mut type_meta, mut raw) = (Value::Null, &[][..]);
    while !r.done() {
        let (n, _, _, data) = r.field()?;
        match n {
            1 => type_meta = message(data, TYPE_META)?,
            2 => raw = data,
            _ => {}
        }
    }
    let api_version = type_meta
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = type_meta
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let schema = schema_for(api_version, kind).ok_or_else(|| {
        Unsupported(format!(
            "protobuf is not supported for {api_version} {kind}; send JSON"
        ))
    })?;
    let mut obj = message(raw, schema)?;
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), Value::String(api_version.to_owned()));
        m.insert("kind".into(), Value::String(kind.to_owned()));
    }
    Ok(obj)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn field(n: u64, data: &[u8], out: &mut Vec<u8>) {
        varint(n << 3 | 2, out);
        varint(data.len() as u64, out);
        out.extend_from_slice(data);
    }

    /// A protobuf ConfigMap body (`k8s\0` + `runtime.Unknown`) named `settings` with data
    /// `k: v` and the given labels.
    pub(crate) fn configmap_body(labels: &[(&str, &str)]) -> Vec<u8> {
        let mut meta = Vec::new();
        field(1, b"settings", &mut meta);
        for (k, v) in labels {
            let mut label = Vec::new();
            field(1, k.as_bytes(), &mut label);
            field(2, v.as_bytes(), &mut label);
            field(11, &label, &mut meta);
        }
        let mut cm = Vec::new();
        field(1, &meta, &mut cm);
        let mut entry = Vec::new();
        field(1, b"k", &mut entry);
        field(2, b"v", &mut entry);
        field(2, &entry, &mut cm);
        let mut tm = Vec::new();
        field(1, b"v1", &mut tm);
        field(2, b"ConfigMap", &mut tm);
        let mut body = b"k8s\x00".to_vec();
        field(1, &tm, &mut body);
        field(2, &cm, &mut body);
        body
    }

    #[test]
    fn a_protobuf_configmap_should_decode_to_json() {
        let body = configmap_body(&[("app", "web")]);
        let v = decode(&body).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"app": "web"}}, "data": {"k": "v"}})
        );
    }

    #[test]
    fn unsupported_or_malformed_protobuf_should_be_refused() {
        assert!(decode(b"not protobuf").is_err());
        assert!(decode(b"k8s\x00\x0a\xff").is_err());
        let mut tm = Vec::new();
        field(1, b"apps/v1", &mut tm);
        field(2, b"Deployment", &mut tm);
        let mut body = b"k8s\x00".to_vec();
        field(1, &tm, &mut body);
        assert!(decode(&body).is_err());
    }

    #[test]
    fn base64_should_pad() {
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
    }
}
