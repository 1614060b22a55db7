//! Decoding of Kubernetes protobuf request bodies for a few built-in kinds, so typed kubectl
//! commands (`kubectl create configmap|secret|namespace|serviceaccount|deployment`) work: kubectl
//! sends built-in objects as `application/vnd.kubernetes.protobuf` and does not fall back to JSON.
//! The server always answers in JSON (kubectl accepts it).
//!
//! Field numbers are those of k8s.io/api's `generated.proto`. Go's encoder writes every field
//! that is not a pointer, zero or not; the JSON form leaves out zero values of such fields (as
//! `omitempty` / `omitzero` do) and keeps those of pointer fields. A field the decoder does not
//! know is skipped when it holds only zero values and refused (`415`, send JSON) otherwise, so
//! nothing a client set is dropped silently.

use serde_json::{Map, Value, json};

/// How a field is encoded, and how it becomes JSON.
#[derive(Clone, Copy)]
enum Kind {
    /// A string; left out when empty.
    Str,
    /// A string behind a pointer: kept when empty.
    OptStr,
    /// An integer; left out when 0.
    Int,
    /// An integer behind a pointer: kept when 0.
    OptInt,
    /// A boolean; left out when false.
    Bool,
    /// A boolean behind a pointer: kept when false.
    OptBool,
    /// `metav1.Time` (seconds, RFC 3339); the zero time is left out.
    Time,
    /// `metav1.MicroTime` (microseconds); the zero time is left out.
    MicroTime,
    /// `resource.Quantity`: its string.
    Quantity,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    Msg(&'static [Field]),
    /// An embedded struct whose fields JSON writes into the enclosing object.
    Inline(&'static [Field]),
    MapStr,
    MapBytes,
    MapQuantity,
    RepStr,
    RepMsg(&'static [Field]),
}

type Field = (u64, &'static str, Kind);

const OWNER_REFERENCE: &[Field] = &[
    (1, "kind", Kind::Str),
    (3, "name", Kind::Str),
    (4, "uid", Kind::Str),
    (5, "apiVersion", Kind::Str),
    (6, "controller", Kind::OptBool),
    (7, "blockOwnerDeletion", Kind::OptBool),
];

const OBJECT_META: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "generateName", Kind::Str),
    (3, "namespace", Kind::Str),
    (4, "selfLink", Kind::Str),
    (5, "uid", Kind::Str),
    (6, "resourceVersion", Kind::Str),
    (7, "generation", Kind::Int),
    (8, "creationTimestamp", Kind::Time),
    (9, "deletionTimestamp", Kind::Time),
    (10, "deletionGracePeriodSeconds", Kind::OptInt),
    (11, "labels", Kind::MapStr),
    (12, "annotations", Kind::MapStr),
    (13, "ownerReferences", Kind::RepMsg(OWNER_REFERENCE)),
    (14, "finalizers", Kind::RepStr),
];

const CONFIG_MAP: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "data", Kind::MapStr),
    (3, "binaryData", Kind::MapBytes),
    (4, "immutable", Kind::OptBool),
];

const SECRET: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "data", Kind::MapBytes),
    (3, "type", Kind::Str),
    (4, "stringData", Kind::MapStr),
    (5, "immutable", Kind::OptBool),
];

const NAMESPACE_SPEC: &[Field] = &[(1, "finalizers", Kind::RepStr)];
const NAMESPACE_STATUS: &[Field] = &[(1, "phase", Kind::Str)];
const NAMESPACE: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "spec", Kind::Msg(NAMESPACE_SPEC)),
    (3, "status", Kind::Msg(NAMESPACE_STATUS)),
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
    (4, "automountServiceAccountToken", Kind::OptBool),
];

const LEASE_SPEC: &[Field] = &[
    (1, "holderIdentity", Kind::OptStr),
    (2, "leaseDurationSeconds", Kind::OptInt),
    (3, "acquireTime", Kind::MicroTime),
    (4, "renewTime", Kind::MicroTime),
    (5, "leaseTransitions", Kind::OptInt),
    (6, "strategy", Kind::OptStr),
    (7, "preferredHolder", Kind::OptStr),
];
const LEASE: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "spec", Kind::Msg(LEASE_SPEC)),
];

// apps/v1 Deployment and the core/v1 types of its Pod template.

const LABEL_SELECTOR_REQUIREMENT: &[Field] = &[
    (1, "key", Kind::Str),
    (2, "operator", Kind::Str),
    (3, "values", Kind::RepStr),
];
const LABEL_SELECTOR: &[Field] = &[
    (1, "matchLabels", Kind::MapStr),
    (
        2,
        "matchExpressions",
        Kind::RepMsg(LABEL_SELECTOR_REQUIREMENT),
    ),
];

const KEY_TO_PATH: &[Field] = &[
    (1, "key", Kind::Str),
    (2, "path", Kind::Str),
    (3, "mode", Kind::OptInt),
];
const HOST_PATH_VOLUME_SOURCE: &[Field] = &[(1, "path", Kind::Str), (2, "type", Kind::OptStr)];
const EMPTY_DIR_VOLUME_SOURCE: &[Field] =
    &[(1, "medium", Kind::Str), (2, "sizeLimit", Kind::Quantity)];
const SECRET_VOLUME_SOURCE: &[Field] = &[
    (1, "secretName", Kind::Str),
    (2, "items", Kind::RepMsg(KEY_TO_PATH)),
    (3, "defaultMode", Kind::OptInt),
    (4, "optional", Kind::OptBool),
];
const CONFIG_MAP_VOLUME_SOURCE: &[Field] = &[
    (1, "", Kind::Inline(LOCAL_OBJECT_REFERENCE)),
    (2, "items", Kind::RepMsg(KEY_TO_PATH)),
    (3, "defaultMode", Kind::OptInt),
    (4, "optional", Kind::OptBool),
];
const PVC_VOLUME_SOURCE: &[Field] = &[(1, "claimName", Kind::Str), (2, "readOnly", Kind::Bool)];
const VOLUME_SOURCE: &[Field] = &[
    (1, "hostPath", Kind::Msg(HOST_PATH_VOLUME_SOURCE)),
    (2, "emptyDir", Kind::Msg(EMPTY_DIR_VOLUME_SOURCE)),
    (6, "secret", Kind::Msg(SECRET_VOLUME_SOURCE)),
    (10, "persistentVolumeClaim", Kind::Msg(PVC_VOLUME_SOURCE)),
    (19, "configMap", Kind::Msg(CONFIG_MAP_VOLUME_SOURCE)),
];
const VOLUME: &[Field] = &[(1, "name", Kind::Str), (2, "", Kind::Inline(VOLUME_SOURCE))];

const CONTAINER_PORT: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "hostPort", Kind::Int),
    (3, "containerPort", Kind::Int),
    (4, "protocol", Kind::Str),
    (5, "hostIP", Kind::Str),
];
const OBJECT_FIELD_SELECTOR: &[Field] =
    &[(1, "apiVersion", Kind::Str), (2, "fieldPath", Kind::Str)];
const RESOURCE_FIELD_SELECTOR: &[Field] = &[
    (1, "containerName", Kind::Str),
    (2, "resource", Kind::Str),
    (3, "divisor", Kind::Quantity),
];
const KEY_SELECTOR: &[Field] = &[
    (1, "", Kind::Inline(LOCAL_OBJECT_REFERENCE)),
    (2, "key", Kind::Str),
    (3, "optional", Kind::OptBool),
];
const ENV_VAR_SOURCE: &[Field] = &[
    (1, "fieldRef", Kind::Msg(OBJECT_FIELD_SELECTOR)),
    (2, "resourceFieldRef", Kind::Msg(RESOURCE_FIELD_SELECTOR)),
    (3, "configMapKeyRef", Kind::Msg(KEY_SELECTOR)),
    (4, "secretKeyRef", Kind::Msg(KEY_SELECTOR)),
];
const ENV_VAR: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "value", Kind::Str),
    (3, "valueFrom", Kind::Msg(ENV_VAR_SOURCE)),
];
const ENV_SOURCE: &[Field] = &[
    (1, "", Kind::Inline(LOCAL_OBJECT_REFERENCE)),
    (2, "optional", Kind::OptBool),
];
const ENV_FROM_SOURCE: &[Field] = &[
    (1, "prefix", Kind::Str),
    (2, "configMapRef", Kind::Msg(ENV_SOURCE)),
    (3, "secretRef", Kind::Msg(ENV_SOURCE)),
];
const RESOURCE_REQUIREMENTS: &[Field] = &[
    (1, "limits", Kind::MapQuantity),
    (2, "requests", Kind::MapQuantity),
];
const VOLUME_MOUNT: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "readOnly", Kind::Bool),
    (3, "mountPath", Kind::Str),
    (4, "subPath", Kind::Str),
    (5, "mountPropagation", Kind::OptStr),
    (6, "subPathExpr", Kind::Str),
    (7, "recursiveReadOnly", Kind::OptStr),
];
const EXEC_ACTION: &[Field] = &[(1, "command", Kind::RepStr)];
const HTTP_HEADER: &[Field] = &[(1, "name", Kind::Str), (2, "value", Kind::Str)];
const HTTP_GET_ACTION: &[Field] = &[
    (1, "path", Kind::Str),
    (2, "port", Kind::IntOrString),
    (3, "host", Kind::Str),
    (4, "scheme", Kind::Str),
    (5, "httpHeaders", Kind::RepMsg(HTTP_HEADER)),
];
const TCP_SOCKET_ACTION: &[Field] = &[(1, "port", Kind::IntOrString), (2, "host", Kind::Str)];
const GRPC_ACTION: &[Field] = &[(1, "port", Kind::Int), (2, "service", Kind::OptStr)];
const PROBE_HANDLER: &[Field] = &[
    (1, "exec", Kind::Msg(EXEC_ACTION)),
    (2, "httpGet", Kind::Msg(HTTP_GET_ACTION)),
    (3, "tcpSocket", Kind::Msg(TCP_SOCKET_ACTION)),
    (4, "grpc", Kind::Msg(GRPC_ACTION)),
];
const PROBE: &[Field] = &[
    (1, "", Kind::Inline(PROBE_HANDLER)),
    (2, "initialDelaySeconds", Kind::Int),
    (3, "timeoutSeconds", Kind::Int),
    (4, "periodSeconds", Kind::Int),
    (5, "successThreshold", Kind::Int),
    (6, "failureThreshold", Kind::Int),
    (7, "terminationGracePeriodSeconds", Kind::OptInt),
];
const CONTAINER_RESIZE_POLICY: &[Field] = &[
    (1, "resourceName", Kind::Str),
    (2, "restartPolicy", Kind::Str),
];
const CONTAINER: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "image", Kind::Str),
    (3, "command", Kind::RepStr),
    (4, "args", Kind::RepStr),
    (5, "workingDir", Kind::Str),
    (6, "ports", Kind::RepMsg(CONTAINER_PORT)),
    (7, "env", Kind::RepMsg(ENV_VAR)),
    (8, "resources", Kind::Msg(RESOURCE_REQUIREMENTS)),
    (9, "volumeMounts", Kind::RepMsg(VOLUME_MOUNT)),
    (10, "livenessProbe", Kind::Msg(PROBE)),
    (11, "readinessProbe", Kind::Msg(PROBE)),
    (13, "terminationMessagePath", Kind::Str),
    (14, "imagePullPolicy", Kind::Str),
    (16, "stdin", Kind::Bool),
    (17, "stdinOnce", Kind::Bool),
    (18, "tty", Kind::Bool),
    (19, "envFrom", Kind::RepMsg(ENV_FROM_SOURCE)),
    (20, "terminationMessagePolicy", Kind::Str),
    (22, "startupProbe", Kind::Msg(PROBE)),
    (23, "resizePolicy", Kind::RepMsg(CONTAINER_RESIZE_POLICY)),
    (24, "restartPolicy", Kind::OptStr),
];
const TOLERATION: &[Field] = &[
    (1, "key", Kind::Str),
    (2, "operator", Kind::Str),
    (3, "value", Kind::Str),
    (4, "effect", Kind::Str),
    (5, "tolerationSeconds", Kind::OptInt),
];
const POD_SPEC: &[Field] = &[
    (1, "volumes", Kind::RepMsg(VOLUME)),
    (2, "containers", Kind::RepMsg(CONTAINER)),
    (3, "restartPolicy", Kind::Str),
    (4, "terminationGracePeriodSeconds", Kind::OptInt),
    (5, "activeDeadlineSeconds", Kind::OptInt),
    (6, "dnsPolicy", Kind::Str),
    (7, "nodeSelector", Kind::MapStr),
    (8, "serviceAccountName", Kind::Str),
    (9, "serviceAccount", Kind::Str),
    (10, "nodeName", Kind::Str),
    (11, "hostNetwork", Kind::Bool),
    (12, "hostPID", Kind::Bool),
    (13, "hostIPC", Kind::Bool),
    (15, "imagePullSecrets", Kind::RepMsg(LOCAL_OBJECT_REFERENCE)),
    (16, "hostname", Kind::Str),
    (17, "subdomain", Kind::Str),
    (19, "schedulerName", Kind::Str),
    (20, "initContainers", Kind::RepMsg(CONTAINER)),
    (21, "automountServiceAccountToken", Kind::OptBool),
    (22, "tolerations", Kind::RepMsg(TOLERATION)),
    (24, "priorityClassName", Kind::Str),
    (25, "priority", Kind::OptInt),
    (27, "shareProcessNamespace", Kind::OptBool),
    (29, "runtimeClassName", Kind::OptStr),
    (30, "enableServiceLinks", Kind::OptBool),
    (31, "preemptionPolicy", Kind::OptStr),
    (35, "setHostnameAsFQDN", Kind::OptBool),
    (37, "hostUsers", Kind::OptBool),
];
const POD_TEMPLATE_SPEC: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "spec", Kind::Msg(POD_SPEC)),
];

const ROLLING_UPDATE_DEPLOYMENT: &[Field] = &[
    (1, "maxUnavailable", Kind::IntOrString),
    (2, "maxSurge", Kind::IntOrString),
];
const DEPLOYMENT_STRATEGY: &[Field] = &[
    (1, "type", Kind::Str),
    (2, "rollingUpdate", Kind::Msg(ROLLING_UPDATE_DEPLOYMENT)),
];
const DEPLOYMENT_SPEC: &[Field] = &[
    (1, "replicas", Kind::OptInt),
    (2, "selector", Kind::Msg(LABEL_SELECTOR)),
    (3, "template", Kind::Msg(POD_TEMPLATE_SPEC)),
    (4, "strategy", Kind::Msg(DEPLOYMENT_STRATEGY)),
    (5, "minReadySeconds", Kind::Int),
    (6, "revisionHistoryLimit", Kind::OptInt),
    (7, "paused", Kind::Bool),
    (9, "progressDeadlineSeconds", Kind::OptInt),
];
const DEPLOYMENT_CONDITION: &[Field] = &[
    (1, "type", Kind::Str),
    (2, "status", Kind::Str),
    (4, "reason", Kind::Str),
    (5, "message", Kind::Str),
    (6, "lastUpdateTime", Kind::Time),
    (7, "lastTransitionTime", Kind::Time),
];
const DEPLOYMENT_STATUS: &[Field] = &[
    (1, "observedGeneration", Kind::Int),
    (2, "replicas", Kind::Int),
    (3, "updatedReplicas", Kind::Int),
    (4, "availableReplicas", Kind::Int),
    (5, "unavailableReplicas", Kind::Int),
    (6, "conditions", Kind::RepMsg(DEPLOYMENT_CONDITION)),
    (7, "readyReplicas", Kind::Int),
    (8, "collisionCount", Kind::OptInt),
    (9, "terminatingReplicas", Kind::OptInt),
];
const DEPLOYMENT: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "spec", Kind::Msg(DEPLOYMENT_SPEC)),
    (3, "status", Kind::Msg(DEPLOYMENT_STATUS)),
];

const TYPE_META: &[Field] = &[(1, "apiVersion", Kind::Str), (2, "kind", Kind::Str)];

fn schema_for(api_version: &str, kind: &str) -> Option<&'static [Field]> {
    Some(match (api_version, kind) {
        ("v1", "ConfigMap") => CONFIG_MAP,
        ("v1", "Secret") => SECRET,
        ("v1", "Namespace") => NAMESPACE,
        ("v1", "ServiceAccount") => SERVICE_ACCOUNT,
        ("coordination.k8s.io/v1", "Lease") => LEASE,
        ("apps/v1", "Deployment") => DEPLOYMENT,
        _ => return None,
    })
}

/// A malformed or unsupported protobuf body.
#[derive(Debug)]
pub(crate) struct Unsupported(pub(crate) String);

/// How deep a field the decoder does not know is looked into for a value that is not zero.
const MAX_UNKNOWN_DEPTH: usize = 16;

/// The last second Go's JSON encoding of a time accepts (9999-12-31T23:59:59Z).
const MAX_SECONDS: i64 = 253_402_300_799;

/// One field of a message: its number, wire type, varint value and payload (the bytes of a
/// length-delimited or fixed-size field).
struct Raw<'a> {
    number: u64,
    wire: u64,
    varint: u64,
    data: &'a [u8],
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

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

    fn take(&mut self, len: usize) -> Result<&'a [u8], Unsupported> {
        let end = self.pos.checked_add(len).filter(|e| *e <= self.buf.len());
        let end = end.ok_or_else(|| Unsupported("truncated field".into()))?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn field(&mut self) -> Result<Raw<'a>, Unsupported> {
        let key = self.varint()?;
        let (number, wire) = (key >> 3, key & 7);
        let mut raw = Raw {
            number,
            wire,
            varint: 0,
            data: &[],
        };
        match wire {
            0 => raw.varint = self.varint()?,
            1 => raw.data = self.take(8)?,
            2 => {
                let len = usize::try_from(self.varint()?)
                    .map_err(|_| Unsupported("field too long".into()))?;
                raw.data = self.take(len)?;
            }
            5 => raw.data = self.take(4)?,
            _ => return Err(Unsupported(format!("unsupported wire type {wire}"))),
        }
        Ok(raw)
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

/// Whether a field holds only zero values: a zero number, an empty payload, or a message of
/// such fields (what Go writes for a field that is not a pointer and was not set).
fn is_zero(raw: &Raw<'_>, depth: usize) -> bool {
    match raw.wire {
        0 => raw.varint == 0,
        2 if raw.data.is_empty() => true,
        2 if depth < MAX_UNKNOWN_DEPTH => {
            let mut r = Reader::new(raw.data);
            while !r.done() {
                match r.field() {
                    Ok(inner) if is_zero(&inner, depth + 1) => {}
                    _ => return false,
                }
            }
            true
        }
        1 | 5 => raw.data.iter().all(|b| *b == 0),
        _ => false,
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

/// A string field. Go does not check UTF-8 when it decodes, and its JSON encoder writes an
/// invalid byte as U+FFFD.
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A map entry (`key` = 1, `value` = 2).
fn map_entry(b: &[u8], kind: Kind) -> Result<(String, Value), Unsupported> {
    let mut r = Reader::new(b);
    let (mut key, mut value) = (String::new(), None);
    while !r.done() {
        let f = r.field()?;
        match f.number {
            1 => key = text(f.data),
            2 => {
                value = Some(match kind {
                    Kind::MapBytes => Value::String(base64(f.data)),
                    Kind::MapQuantity => quantity(f.data)?,
                    _ => Value::String(text(f.data)),
                });
            }
            _ => {}
        }
    }
    let value = value.unwrap_or_else(|| match kind {
        Kind::MapQuantity => Value::String("0".into()),
        _ => Value::String(String::new()),
    });
    Ok((key, value))
}

/// `resource.Quantity` (`string` = 1); the zero quantity is `"0"`.
fn quantity(b: &[u8]) -> Result<Value, Unsupported> {
    let mut r = Reader::new(b);
    let mut out = String::new();
    while !r.done() {
        let f = r.field()?;
        if f.number == 1 {
            out = text(f.data);
        }
    }
    if out.is_empty() {
        out.push('0');
    }
    Ok(Value::String(out))
}

/// `intstr.IntOrString` (`type` = 1: 0 a number, 1 a string; `intVal` = 2; `strVal` = 3).
fn int_or_string(b: &[u8]) -> Result<Value, Unsupported> {
    let mut r = Reader::new(b);
    let (mut ty, mut int, mut string) = (0, 0u64, String::new());
    while !r.done() {
        let f = r.field()?;
        match f.number {
            1 => ty = f.varint,
            2 => int = f.varint,
            3 => string = text(f.data),
            _ => {}
        }
    }
    Ok(match ty {
        0 => json!(int32(int)),
        1 => Value::String(string),
        other => {
            return Err(Unsupported(format!("IntOrString of unknown type {other}")));
        }
    })
}

/// An `int32` as its varint carries it (negative numbers as ten bytes, sign-extended).
#[allow(clippy::cast_possible_truncation)]
fn int32(v: u64) -> i32 {
    v as i32
}

/// `metav1.Time` / `metav1.MicroTime` (`seconds` = 1, `nanos` = 2); `None` for the zero time.
fn time(b: &[u8], micro: bool) -> Result<Option<Value>, Unsupported> {
    let mut r = Reader::new(b);
    let (mut secs, mut nanos) = (0i64, 0i64);
    while !r.done() {
        let f = r.field()?;
        #[allow(clippy::cast_possible_wrap)]
        let signed = f.varint as i64;
        match f.number {
            1 => secs = signed,
            2 => nanos = i64::from(int32(f.varint)),
            _ => {}
        }
    }
    if secs == 0 && nanos == 0 {
        return Ok(None);
    }
    // As Go's time.Unix: nanoseconds out of range carry into the seconds.
    let secs = secs.checked_add(nanos.div_euclid(1_000_000_000));
    let nanos = nanos.rem_euclid(1_000_000_000);
    let secs = secs
        .filter(|s| (0..=MAX_SECONDS).contains(s))
        .and_then(|s| u64::try_from(s).ok())
        .ok_or_else(|| Unsupported("time out of the range 1970 to 9999".into()))?;
    let base = crate::meta::rfc3339(secs);
    Ok(Some(Value::String(if micro {
        format!("{}.{:06}Z", base.trim_end_matches('Z'), nanos / 1000)
    } else {
        base
    })))
}

fn message(b: &[u8], schema: &[Field]) -> Result<Value, Unsupported> {
    let mut out = Map::new();
    message_into(b, schema, &mut out)?;
    Ok(Value::Object(out))
}

fn message_into(
    b: &[u8],
    schema: &[Field],
    out: &mut Map<String, Value>,
) -> Result<(), Unsupported> {
    let mut r = Reader::new(b);
    while !r.done() {
        let f = r.field()?;
        let Some((_, name, kind)) = schema.iter().find(|(num, _, _)| *num == f.number) else {
            if is_zero(&f, 0) {
                continue;
            }
            return Err(Unsupported(format!(
                "protobuf field {} is not supported here; send JSON",
                f.number
            )));
        };
        let expected = match kind {
            Kind::Int | Kind::OptInt | Kind::Bool | Kind::OptBool => 0,
            _ => 2,
        };
        if f.wire != expected {
            return Err(Unsupported(format!(
                "protobuf field {} ({name}) has wire type {}, not {expected}",
                f.number, f.wire
            )));
        }
        let name = (*name).to_owned();
        let zero = f.varint == 0 && f.data.is_empty();
        #[allow(clippy::cast_possible_wrap)]
        let value = match *kind {
            Kind::Str | Kind::Int | Kind::Bool if zero => continue,
            Kind::Str | Kind::OptStr => Value::String(text(f.data)),
            Kind::Int | Kind::OptInt => json!(f.varint as i64),
            Kind::Bool | Kind::OptBool => Value::Bool(f.varint != 0),
            Kind::Time | Kind::MicroTime => match time(f.data, matches!(kind, Kind::MicroTime))? {
                Some(t) => t,
                None => continue,
            },
            Kind::Quantity => quantity(f.data)?,
            Kind::IntOrString => int_or_string(f.data)?,
            Kind::Msg(s) => message(f.data, s)?,
            Kind::Inline(s) => {
                message_into(f.data, s, out)?;
                continue;
            }
            Kind::MapStr | Kind::MapBytes | Kind::MapQuantity => {
                let (k, val) = map_entry(f.data, *kind)?;
                if let Value::Object(m) = out.entry(name).or_insert_with(|| json!({})) {
                    m.insert(k, val);
                }
                continue;
            }
            Kind::RepStr => {
                let item = Value::String(text(f.data));
                if let Value::Array(a) = out.entry(name).or_insert_with(|| json!([])) {
                    a.push(item);
                }
                continue;
            }
            Kind::RepMsg(s) => {
                let item = message(f.data, s)?;
                if let Value::Array(a) = out.entry(name).or_insert_with(|| json!([])) {
                    a.push(item);
                }
                continue;
            }
        };
        out.insert(name, value);
    }
    Ok(())
}

/// Decodes a `application/vnd.kubernetes.protobuf` body (`k8s\0` + `runtime.Unknown`) of a
/// supported kind into its JSON form.
pub(crate) fn decode(body: &[u8]) -> Result<Value, Unsupported> {
    let rest = body
        .strip_prefix(b"k8s\x00")
        .ok_or_else(|| Unsupported("missing the k8s protobuf prefix".into()))?;
    let mut r = Reader::new(rest);
    let (mut type_meta, mut raw) = (Value::Null, &[][..]);
    while !r.done() {
        let f = r.field()?;
        match f.number {
            1 => type_meta = message(f.data, TYPE_META)?,
            2 => raw = f.data,
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
    let mut obj = message(raw, schema)
        .map_err(|Unsupported(e)| Unsupported(format!("{api_version} {kind}: {e}")))?;
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

    fn varint_field(n: u64, v: u64, out: &mut Vec<u8>) {
        varint(n << 3, out);
        varint(v, out);
    }

    fn message(fields: &[(u64, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, data) in fields {
            field(*n, data, &mut out);
        }
        out
    }

    /// `k8s\0` + `runtime.Unknown` around an encoded object.
    fn body(api_version: &str, kind: &str, object: &[u8]) -> Vec<u8> {
        let tm = message(&[(1, api_version.as_bytes()), (2, kind.as_bytes())]);
        let mut out = b"k8s\x00".to_vec();
        out.extend(message(&[(1, &tm), (2, object)]));
        out
    }

    /// What kubectl v1.32 sends for `kubectl create ...`, and what it prints for the same
    /// command with `--dry-run=client -o json`.
    const KUBECTL: &[(&str, &[u8], &str)] = &[
        (
            "create deployment web --image=nginx",
            include_bytes!("../tests/data/protobuf/deployment-web.pb"),
            include_str!("../tests/data/protobuf/deployment-web.json"),
        ),
        (
            "create deployment web2 --image=nginx:1.27 --port=80 --replicas=3 -n team -- nginx -g 'daemon off;'",
            include_bytes!("../tests/data/protobuf/deployment-web2.pb"),
            include_str!("../tests/data/protobuf/deployment-web2.json"),
        ),
        (
            "create configmap settings --from-literal=mode=fast",
            include_bytes!("../tests/data/protobuf/configmap-settings.pb"),
            include_str!("../tests/data/protobuf/configmap-settings.json"),
        ),
        (
            "create secret generic creds --from-literal=password=hunter2",
            include_bytes!("../tests/data/protobuf/secret-creds.pb"),
            include_str!("../tests/data/protobuf/secret-creds.json"),
        ),
        (
            "create namespace team",
            include_bytes!("../tests/data/protobuf/namespace-team.pb"),
            include_str!("../tests/data/protobuf/namespace-team.json"),
        ),
        (
            "create serviceaccount bot",
            include_bytes!("../tests/data/protobuf/serviceaccount-bot.pb"),
            include_str!("../tests/data/protobuf/serviceaccount-bot.json"),
        ),
    ];

    /// Drops `creationTimestamp: null`: kube-apiserver v1.36 leaves the zero time out where
    /// kubectl v1.32 prints null.
    fn without_null_times(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, v| !(k == "creationTimestamp" && v.is_null()));
                m.values_mut().for_each(without_null_times);
            }
            Value::Array(a) => a.iter_mut().for_each(without_null_times),
            _ => {}
        }
    }

    #[test]
    fn what_kubectl_sends_should_decode_to_the_json_it_prints_for_the_same_object() {
        for (command, pb, printed) in KUBECTL {
            let mut expected: Value = serde_json::from_str(printed).unwrap();
            without_null_times(&mut expected);
            let decoded = decode(pb).unwrap_or_else(|e| panic!("kubectl {command}: {}", e.0));
            assert_eq!(decoded, expected, "kubectl {command}");
        }
    }

    #[test]
    fn a_deployment_should_decode_pointer_zeros_inlined_structs_and_int_or_strings() {
        let labels = message(&[(1, b"app"), (2, b"web")]);
        let selector = message(&[(1, &labels)]);
        let mut port = Vec::new();
        varint_field(1, 1, &mut port);
        field(3, b"25%", &mut port);
        let rolling = message(&[(2, &port)]);
        let strategy = message(&[(1, b"RollingUpdate"), (2, &rolling)]);
        let mut http_port = Vec::new();
        varint_field(2, 8080, &mut http_port);
        let http_get = message(&[(1, b"/healthz"), (2, &http_port)]);
        let handler = message(&[(2, &http_get)]);
        let mut probe = message(&[(1, &handler)]);
        varint_field(4, 10, &mut probe);
        let cpu = message(&[(1, b"500m")]);
        let limit = message(&[(1, b"cpu"), (2, &cpu)]);
        let resources = message(&[(1, &limit)]);
        let key_ref = message(&[(1, &message(&[(1, b"settings")])), (2, b"mode")]);
        let source = message(&[(3, &key_ref)]);
        let env = message(&[(1, b"MODE"), (3, &source)]);
        let mut container = message(&[
            (1, b"app"),
            (2, b"nginx"),
            (7, &env),
            (8, &resources),
            (11, &probe),
        ]);
        varint_field(16, 0, &mut container);
        let volume_source = message(&[(19, &message(&[(1, &message(&[(1, b"settings")]))]))]);
        let volume = message(&[(1, b"config"), (2, &volume_source)]);
        let mut pod_spec = message(&[(1, &volume), (2, &container), (3, b"")]);
        varint_field(21, 0, &mut pod_spec);
        let template = message(&[(1, &message(&[(11, &labels)])), (2, &pod_spec)]);
        let mut spec = Vec::new();
        varint_field(1, 0, &mut spec);
        spec.extend(message(&[(2, &selector), (3, &template), (4, &strategy)]));
        varint_field(5, 0, &mut spec);
        let mut time = Vec::new();
        varint_field(1, 1_700_000_000, &mut time);
        varint_field(2, 5, &mut time);
        let meta = message(&[(1, b"web"), (8, &time)]);
        let deployment = message(&[(1, &meta), (2, &spec)]);
        let decoded = decode(&body("apps/v1", "Deployment", &deployment)).unwrap();
        assert_eq!(
            decoded,
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "creationTimestamp": "2023-11-14T22:13:20Z"},
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": "web"}},
                    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {
                            "automountServiceAccountToken": false,
                            "volumes": [{"name": "config", "configMap": {"name": "settings"}}],
                            "containers": [{
                                "name": "app",
                                "image": "nginx",
                                "env": [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}}],
                                "resources": {"limits": {"cpu": "500m"}},
                                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
                            }],
                        },
                    },
                },
            })
        );
    }

    #[test]
    fn a_micro_time_should_keep_its_microseconds() {
        let mut time = Vec::new();
        varint_field(1, 1_700_000_000, &mut time);
        let mut lease_spec = message(&[(3, &time)]);
        varint_field(2, 0, &mut lease_spec);
        let lease = message(&[(1, &message(&[(1, b"leader")])), (2, &lease_spec)]);
        let decoded = decode(&body("coordination.k8s.io/v1", "Lease", &lease)).unwrap();
        assert_eq!(
            decoded["spec"],
            json!({"acquireTime": "2023-11-14T22:13:20.000000Z", "leaseDurationSeconds": 0})
        );
    }

    #[test]
    fn unknown_fields_should_be_skipped_when_zero_and_refused_otherwise() {
        let mut meta = message(&[(1, b"settings"), (16, b"")]);
        varint_field(15, 0, &mut meta);
        field(17, &[0x08, 0x00], &mut meta);
        assert_eq!(
            decode(&body("v1", "ConfigMap", &message(&[(1, &meta)]))).unwrap()["metadata"],
            json!({"name": "settings"})
        );
        let meta = message(&[(1, b"settings"), (17, &message(&[(1, b"kubectl")]))]);
        let e = decode(&body("v1", "ConfigMap", &message(&[(1, &meta)]))).unwrap_err();
        assert_eq!(
            e.0,
            "v1 ConfigMap: protobuf field 17 is not supported here; send JSON"
        );
    }

    #[test]
    fn unsupported_or_malformed_protobuf_should_be_refused() {
        assert!(decode(b"not protobuf").is_err());
        assert!(decode(b"k8s\x00\x0a\xff").is_err());
        let e = decode(&body("batch/v1", "Job", &[])).unwrap_err();
        assert_eq!(e.0, "protobuf is not supported for batch/v1 Job; send JSON");
        // A string field sent as a number.
        let mut meta = Vec::new();
        varint_field(1, 7, &mut meta);
        let e = decode(&body("v1", "ConfigMap", &message(&[(1, &meta)]))).unwrap_err();
        assert_eq!(
            e.0,
            "v1 ConfigMap: protobuf field 1 (name) has wire type 0, not 2"
        );
        // A fixed-size field cut short.
        assert!(decode(&body("v1", "ConfigMap", &[0x09, 1, 2])).is_err());
        // A time past year 9999.
        let mut time = Vec::new();
        varint_field(1, u64::MAX, &mut time);
        let meta = message(&[(8, &time)]);
        assert!(decode(&body("v1", "ConfigMap", &message(&[(1, &meta)]))).is_err());
    }

    #[test]
    fn base64_should_pad() {
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
    }
}
