//! A Pod spec as kube-apiserver's internal Go type (`core.PodSpec`) encodes with
//! `encoding/json`: Go field names (the internal types have no JSON tags), every field present
//! in declaration order, `null` for nil pointers, slices and maps, the host namespace flags
//! inside `SecurityContext` (which the internal type always has), map keys sorted. Validation
//! messages show it: the diff of a forbidden Pod update, the template of an immutable Job.
//!
//! The field orders are those of Kubernetes v1.36's `pkg/apis/core/types.go` for the types a
//! Pod spec usually holds (`PodSpec`, `Container`, `EphemeralContainer`, `PodSecurityContext`,
//! `ResourceRequirements`, `Toleration`, `EnvVar`, `ContainerPort`, `VolumeMount`, `Probe`,
//! `SecurityContext`, `Volume`
//! with its common sources: host path, empty dir, Secret, ConfigMap, claim, downward API,
//! projected with the service account token); other nested types are written with their JSON
//! names capitalised, in sorted order, which may differ from Go's order.

use serde_json::{Map, Value};

/// How one field is encoded.
#[derive(Clone, Copy)]
enum Kind {
    /// A string (`""` when absent).
    Str,
    /// A bool (`false` when absent).
    Bool,
    /// An integer (`0` when absent).
    Int,
    /// A pointer, slice or map of scalars: `null` when absent, else the value.
    Value,
    /// A map: `null` when absent, keys sorted, values as strings.
    Map,
    /// A struct held by value: always an object.
    Struct(&'static [Field]),
    /// A pointer to a struct: `null` when absent.
    Ptr(&'static [Field]),
    /// A slice of structs: `null` when absent.
    List(&'static [Field]),
    /// A nested type without a table: capitalised JSON names.
    Other,
}

#[derive(Clone, Copy)]
struct Field {
    go: &'static str,
    json: &'static str,
    kind: Kind,
}

const fn f(go: &'static str, json: &'static str, kind: Kind) -> Field {
    Field { go, json, kind }
}

const RESOURCES: &[Field] = &[
    f("Limits", "limits", Kind::Map),
    f("Requests", "requests", Kind::Map),
    f("Claims", "claims", Kind::Other),
];

const ENV_VAR: &[Field] = &[
    f("Name", "name", Kind::Str),
    f("Value", "value", Kind::Str),
    f("ValueFrom", "valueFrom", Kind::Other),
];

const CONTAINER_PORT: &[Field] = &[
    f("Name", "name", Kind::Str),
    f("HostPort", "hostPort", Kind::Int),
    f("ContainerPort", "containerPort", Kind::Int),
    f("Protocol", "protocol", Kind::Str),
    f("HostIP", "hostIP", Kind::Str),
];

const VOLUME_MOUNT: &[Field] = &[
    f("Name", "name", Kind::Str),
    f("ReadOnly", "readOnly", Kind::Bool),
    f("RecursiveReadOnly", "recursiveReadOnly", Kind::Value),
    f("MountPath", "mountPath", Kind::Str),
    f("SubPath", "subPath", Kind::Str),
    f("MountPropagation", "mountPropagation", Kind::Value),
    f("SubPathExpr", "subPathExpr", Kind::Str),
];

/// `Probe`: the embedded `ProbeHandler`, then the timings.
const PROBE: &[Field] = &[
    f(
        "Exec",
        "exec",
        Kind::Ptr(&[f("Command", "command", Kind::Value)]),
    ),
    f(
        "HTTPGet",
        "httpGet",
        Kind::Ptr(&[
            f("Path", "path", Kind::Str),
            f("Port", "port", Kind::Int),
            f("Host", "host", Kind::Str),
            f("Scheme", "scheme", Kind::Str),
            f("HTTPHeaders", "httpHeaders", Kind::Other),
        ]),
    ),
    f(
        "TCPSocket",
        "tcpSocket",
        Kind::Ptr(&[f("Port", "port", Kind::Int), f("Host", "host", Kind::Str)]),
    ),
    f(
        "GRPC",
        "grpc",
        Kind::Ptr(&[
            f("Port", "port", Kind::Int),
            f("Service", "service", Kind::Value),
        ]),
    ),
    f("InitialDelaySeconds", "initialDelaySeconds", Kind::Int),
    f("TimeoutSeconds", "timeoutSeconds", Kind::Int),
    f("PeriodSeconds", "periodSeconds", Kind::Int),
    f("SuccessThreshold", "successThreshold", Kind::Int),
    f("FailureThreshold", "failureThreshold", Kind::Int),
    f(
        "TerminationGracePeriodSeconds",
        "terminationGracePeriodSeconds",
        Kind::Value,
    ),
];

/// A container's `SecurityContext`.
const SECURITY_CONTEXT: &[Field] = &[
    f(
        "Capabilities",
        "capabilities",
        Kind::Ptr(&[f("Add", "add", Kind::Value), f("Drop", "drop", Kind::Value)]),
    ),
    f("Privileged", "privileged", Kind::Value),
    f("SELinuxOptions", "seLinuxOptions", Kind::Other),
    f("WindowsOptions", "windowsOptions", Kind::Other),
    f("RunAsUser", "runAsUser", Kind::Value),
    f("RunAsGroup", "runAsGroup", Kind::Value),
    f("RunAsNonRoot", "runAsNonRoot", Kind::Value),
    f(
        "ReadOnlyRootFilesystem",
        "readOnlyRootFilesystem",
        Kind::Value,
    ),
    f(
        "AllowPrivilegeEscalation",
        "allowPrivilegeEscalation",
        Kind::Value,
    ),
    f("ProcMount", "procMount", Kind::Value),
    f("SeccompProfile", "seccompProfile", Kind::Other),
    f("AppArmorProfile", "appArmorProfile", Kind::Other),
];

/// The fields of `Container`, which `EphemeralContainerCommon` repeats.
macro_rules! container_fields {
    ($($extra:expr),*) => {
        &[
    f("Name", "name", Kind::Str),
    f("Image", "image", Kind::Str),
    f("Command", "command", Kind::Value),
    f("Args", "args", Kind::Value),
    f("WorkingDir", "workingDir", Kind::Str),
    f("Ports", "ports", Kind::List(CONTAINER_PORT)),
    f("EnvFrom", "envFrom", Kind::Other),
    f("Env", "env", Kind::List(ENV_VAR)),
    f("Resources", "resources", Kind::Struct(RESOURCES)),
    f("ResizePolicy", "resizePolicy", Kind::Other),
    f("RestartPolicy", "restartPolicy", Kind::Value),
    f("RestartPolicyRules", "restartPolicyRules", Kind::Other),
    f("VolumeMounts", "volumeMounts", Kind::List(VOLUME_MOUNT)),
    f("VolumeDevices", "volumeDevices", Kind::Other),
    f("LivenessProbe", "livenessProbe", Kind::Ptr(PROBE)),
    f("ReadinessProbe", "readinessProbe", Kind::Ptr(PROBE)),
    f("StartupProbe", "startupProbe", Kind::Ptr(PROBE)),
    f("Lifecycle", "lifecycle", Kind::Other),
    f(
        "TerminationMessagePath",
        "terminationMessagePath",
        Kind::Str,
    ),
    f(
        "TerminationMessagePolicy",
        "terminationMessagePolicy",
        Kind::Str,
    ),
    f("ImagePullPolicy", "imagePullPolicy", Kind::Str),
    f(
            "SecurityContext",
            "securityContext",
            Kind::Ptr(SECURITY_CONTEXT),
        ),
    f("Stdin", "stdin", Kind::Bool),
    f("StdinOnce", "stdinOnce", Kind::Bool),
    f("TTY", "tty", Kind::Bool),
            $($extra,)*
        ]
    };
}

const CONTAINER: &[Field] = container_fields!();

/// An `EphemeralContainer`: the container fields (embedded), then its target.
const EPHEMERAL_CONTAINER: &[Field] =
    container_fields!(f("TargetContainerName", "targetContainerName", Kind::Str));

const POD_SECURITY_CONTEXT: &[Field] = &[
    f("HostNetwork", "hostNetwork", Kind::Bool),
    f("HostPID", "hostPID", Kind::Bool),
    f("HostIPC", "hostIPC", Kind::Bool),
    f(
        "ShareProcessNamespace",
        "shareProcessNamespace",
        Kind::Value,
    ),
    f("HostUsers", "hostUsers", Kind::Value),
    f("SELinuxOptions", "seLinuxOptions", Kind::Other),
    f("WindowsOptions", "windowsOptions", Kind::Other),
    f("RunAsUser", "runAsUser", Kind::Value),
    f("RunAsGroup", "runAsGroup", Kind::Value),
    f("RunAsNonRoot", "runAsNonRoot", Kind::Value),
    f("SupplementalGroups", "supplementalGroups", Kind::Value),
    f(
        "SupplementalGroupsPolicy",
        "supplementalGroupsPolicy",
        Kind::Value,
    ),
    f("FSGroup", "fsGroup", Kind::Value),
    f("FSGroupChangePolicy", "fsGroupChangePolicy", Kind::Value),
    f("Sysctls", "sysctls", Kind::Other),
    f("SeccompProfile", "seccompProfile", Kind::Other),
    f("AppArmorProfile", "appArmorProfile", Kind::Other),
    f("SELinuxChangePolicy", "seLinuxChangePolicy", Kind::Value),
];

const TOLERATION: &[Field] = &[
    f("Key", "key", Kind::Str),
    f("Operator", "operator", Kind::Str),
    f("Value", "value", Kind::Str),
    f("Effect", "effect", Kind::Str),
    f("TolerationSeconds", "tolerationSeconds", Kind::Value),
];

const KEY_TO_PATH: &[Field] = &[
    f("Key", "key", Kind::Str),
    f("Path", "path", Kind::Str),
    f("Mode", "mode", Kind::Value),
];

const OBJECT_FIELD_SELECTOR: &[Field] = &[
    f("APIVersion", "apiVersion", Kind::Str),
    f("FieldPath", "fieldPath", Kind::Str),
];

const DOWNWARD_API_FILE: &[Field] = &[
    f("Path", "path", Kind::Str),
    f("FieldRef", "fieldRef", Kind::Ptr(OBJECT_FIELD_SELECTOR)),
    f("ResourceFieldRef", "resourceFieldRef", Kind::Other),
    f("Mode", "mode", Kind::Value),
];

/// `ConfigMapProjection` and `SecretProjection` (a `LocalObjectReference` embedded, then
/// the items).
const NAMED_PROJECTION: &[Field] = &[
    f("Name", "name", Kind::Str),
    f("Items", "items", Kind::List(KEY_TO_PATH)),
    f("Optional", "optional", Kind::Value),
];

const VOLUME_PROJECTION: &[Field] = &[
    f("Secret", "secret", Kind::Ptr(NAMED_PROJECTION)),
    f(
        "DownwardAPI",
        "downwardAPI",
        Kind::Ptr(&[f("Items", "items", Kind::List(DOWNWARD_API_FILE))]),
    ),
    f("ConfigMap", "configMap", Kind::Ptr(NAMED_PROJECTION)),
    f(
        "ServiceAccountToken",
        "serviceAccountToken",
        Kind::Ptr(&[
            f("Audience", "audience", Kind::Str),
            f("ExpirationSeconds", "expirationSeconds", Kind::Int),
            f("Path", "path", Kind::Str),
        ]),
    ),
    f("ClusterTrustBundle", "clusterTrustBundle", Kind::Other),
    f("PodCertificate", "podCertificate", Kind::Other),
];

/// `Volume`: its name, then the fields of the embedded `VolumeSource` (one of them set).
const VOLUME: &[Field] = &[
    f("Name", "name", Kind::Str),
    f(
        "HostPath",
        "hostPath",
        Kind::Ptr(&[f("Path", "path", Kind::Str), f("Type", "type", Kind::Value)]),
    ),
    f(
        "EmptyDir",
        "emptyDir",
        Kind::Ptr(&[
            f("Medium", "medium", Kind::Str),
            f("SizeLimit", "sizeLimit", Kind::Value),
        ]),
    ),
    f("GCEPersistentDisk", "gcePersistentDisk", Kind::Other),
    f("AWSElasticBlockStore", "awsElasticBlockStore", Kind::Other),
    f("GitRepo", "gitRepo", Kind::Other),
    f(
        "Secret",
        "secret",
        Kind::Ptr(&[
            f("SecretName", "secretName", Kind::Str),
            f("Items", "items", Kind::List(KEY_TO_PATH)),
            f("DefaultMode", "defaultMode", Kind::Value),
            f("Optional", "optional", Kind::Value),
        ]),
    ),
    f("NFS", "nfs", Kind::Other),
    f("ISCSI", "iscsi", Kind::Other),
    f("Glusterfs", "glusterfs", Kind::Other),
    f(
        "PersistentVolumeClaim",
        "persistentVolumeClaim",
        Kind::Ptr(&[
            f("ClaimName", "claimName", Kind::Str),
            f("ReadOnly", "readOnly", Kind::Bool),
        ]),
    ),
    f("RBD", "rbd", Kind::Other),
    f("Quobyte", "quobyte", Kind::Other),
    f("FlexVolume", "flexVolume", Kind::Other),
    f("Cinder", "cinder", Kind::Other),
    f("CephFS", "cephfs", Kind::Other),
    f("Flocker", "flocker", Kind::Other),
    f(
        "DownwardAPI",
        "downwardAPI",
        Kind::Ptr(&[
            f("Items", "items", Kind::List(DOWNWARD_API_FILE)),
            f("DefaultMode", "defaultMode", Kind::Value),
        ]),
    ),
    f("FC", "fc", Kind::Other),
    f("AzureFile", "azureFile", Kind::Other),
    f(
        "ConfigMap",
        "configMap",
        Kind::Ptr(&[
            f("Name", "name", Kind::Str),
            f("Items", "items", Kind::List(KEY_TO_PATH)),
            f("DefaultMode", "defaultMode", Kind::Value),
            f("Optional", "optional", Kind::Value),
        ]),
    ),
    f("VsphereVolume", "vsphereVolume", Kind::Other),
    f("AzureDisk", "azureDisk", Kind::Other),
    f("PhotonPersistentDisk", "photonPersistentDisk", Kind::Other),
    f(
        "Projected",
        "projected",
        Kind::Ptr(&[
            f("Sources", "sources", Kind::List(VOLUME_PROJECTION)),
            f("DefaultMode", "defaultMode", Kind::Value),
        ]),
    ),
    f("PortworxVolume", "portworxVolume", Kind::Other),
    f("ScaleIO", "scaleIO", Kind::Other),
    f("StorageOS", "storageos", Kind::Other),
    f("CSI", "csi", Kind::Other),
    f("Ephemeral", "ephemeral", Kind::Other),
    f("Image", "image", Kind::Other),
];

const POD_SPEC: &[Field] = &[
    f("Volumes", "volumes", Kind::List(VOLUME)),
    f("InitContainers", "initContainers", Kind::List(CONTAINER)),
    f("Containers", "containers", Kind::List(CONTAINER)),
    f(
        "EphemeralContainers",
        "ephemeralContainers",
        Kind::List(EPHEMERAL_CONTAINER),
    ),
    f("RestartPolicy", "restartPolicy", Kind::Str),
    f(
        "TerminationGracePeriodSeconds",
        "terminationGracePeriodSeconds",
        Kind::Value,
    ),
    f(
        "ActiveDeadlineSeconds",
        "activeDeadlineSeconds",
        Kind::Value,
    ),
    f("DNSPolicy", "dnsPolicy", Kind::Str),
    f("NodeSelector", "nodeSelector", Kind::Map),
    f("ServiceAccountName", "serviceAccountName", Kind::Str),
    f(
        "AutomountServiceAccountToken",
        "automountServiceAccountToken",
        Kind::Value,
    ),
    f("NodeName", "nodeName", Kind::Str),
    f(
        "SecurityContext",
        "securityContext",
        Kind::Ptr(POD_SECURITY_CONTEXT),
    ),
    f("ImagePullSecrets", "imagePullSecrets", Kind::Other),
    f("Hostname", "hostname", Kind::Str),
    f("Subdomain", "subdomain", Kind::Str),
    f("SetHostnameAsFQDN", "setHostnameAsFQDN", Kind::Value),
    f("Affinity", "affinity", Kind::Other),
    f("SchedulerName", "schedulerName", Kind::Str),
    f("Tolerations", "tolerations", Kind::List(TOLERATION)),
    f("HostAliases", "hostAliases", Kind::Other),
    f("PriorityClassName", "priorityClassName", Kind::Str),
    f("Priority", "priority", Kind::Value),
    f("PreemptionPolicy", "preemptionPolicy", Kind::Value),
    f("DNSConfig", "dnsConfig", Kind::Other),
    f("ReadinessGates", "readinessGates", Kind::Other),
    f("RuntimeClassName", "runtimeClassName", Kind::Value),
    f("Overhead", "overhead", Kind::Map),
    f("EnableServiceLinks", "enableServiceLinks", Kind::Value),
    f(
        "TopologySpreadConstraints",
        "topologySpreadConstraints",
        Kind::Other,
    ),
    f("OS", "os", Kind::Other),
    f("SchedulingGates", "schedulingGates", Kind::Other),
    f("ResourceClaims", "resourceClaims", Kind::Other),
    f("Resources", "resources", Kind::Ptr(RESOURCES)),
    f("HostnameOverride", "hostnameOverride", Kind::Value),
    f("SchedulingGroup", "schedulingGroup", Kind::Other),
];

/// A value in Go's field order.
enum Go {
    Null,
    Scalar(Value),
    Array(Vec<Go>),
    Object(Vec<(String, Go)>),
}

fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

fn capitalised(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn other(v: &Value) -> Go {
    match v {
        Value::Null => Go::Null,
        Value::Array(items) => Go::Array(items.iter().map(other).collect()),
        Value::Object(m) => Go::Object(m.iter().map(|(k, v)| (capitalised(k), other(v))).collect()),
        scalar => Go::Scalar(scalar.clone()),
    }
}

/// A pointer to a scalar, or a slice or map of scalars, as it is (map keys sorted).
fn plain(v: &Value) -> Go {
    match v {
        Value::Null => Go::Null,
        Value::Array(items) => Go::Array(items.iter().map(plain).collect()),
        Value::Object(m) => Go::Object(m.iter().map(|(k, v)| (k.clone(), plain(v))).collect()),
        scalar => Go::Scalar(scalar.clone()),
    }
}

fn map(v: &Value) -> Go {
    match v {
        Value::Object(m) => Go::Object(
            m.iter()
                .map(|(k, v)| {
                    let s = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), Go::Scalar(Value::String(s)))
                })
                .collect(),
        ),
        other_value => other(other_value),
    }
}

fn object(fields: &[Field], obj: Option<&Map<String, Value>>) -> Go {
    let get = |k: &str| present(obj.and_then(|o| o.get(k)));
    Go::Object(
        fields
            .iter()
            .map(|fd| {
                let v = get(fd.json);
                let go = match fd.kind {
                    Kind::Str => Go::Scalar(v.cloned().unwrap_or_else(|| Value::from(""))),
                    Kind::Bool => Go::Scalar(v.cloned().unwrap_or(Value::Bool(false))),
                    Kind::Int => Go::Scalar(v.cloned().unwrap_or_else(|| Value::from(0))),
                    Kind::Value => v.map_or(Go::Null, plain),
                    Kind::Map => v.map_or(Go::Null, map),
                    Kind::Struct(inner) => object(inner, v.and_then(Value::as_object)),
                    Kind::Ptr(inner) => v.map_or(Go::Null, |v| object(inner, v.as_object())),
                    Kind::List(inner) => v.map_or(Go::Null, |v| match v {
                        Value::Array(items) => {
                            Go::Array(items.iter().map(|i| object(inner, i.as_object())).collect())
                        }
                        other_value => other(other_value),
                    }),
                    Kind::Other => v.map_or(Go::Null, other),
                };
                (fd.go.to_owned(), go)
            })
            .collect(),
    )
}

/// The internal form of a v1 Pod spec (`spec` of a Pod or of a template).
fn pod_spec(spec: Option<&Value>) -> Go {
    let mut spec = spec.and_then(Value::as_object).cloned().unwrap_or_default();
    // The host namespace flags live in the security context, which always exists.
    let mut security = spec
        .get("securityContext")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for key in [
        "hostNetwork",
        "hostPID",
        "hostIPC",
        "shareProcessNamespace",
        "hostUsers",
    ] {
        if let Some(v) = spec.get(key) {
            security.insert(key.to_owned(), v.clone());
        }
    }
    spec.insert("securityContext".into(), Value::Object(security));
    object(POD_SPEC, Some(&spec))
}

/// Writes a string as Go's `encoding/json` does (`<`, `>`, `&` and the line separators
/// escaped, `\b` and `\f` short as since Go 1.22).
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write(out: &mut String, v: &Go, indent: Option<usize>) {
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&" ".repeat(depth));
    };
    match v {
        Go::Null => out.push_str("null"),
        Go::Scalar(Value::String(s)) => write_string(out, s),
        Go::Scalar(other) => out.push_str(&other.to_string()),
        Go::Array(items) if items.is_empty() => out.push_str("[]"),
        Go::Object(fields) if fields.is_empty() => out.push_str("{}"),
        Go::Array(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                if let Some(depth) = indent {
                    newline(out, depth + 1);
                }
                write(out, item, indent.map(|d| d + 1));
            }
            if let Some(depth) = indent {
                newline(out, depth);
            }
            out.push(']');
        }
        Go::Object(fields) => {
            out.push('{');
            for (n, (k, item)) in fields.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                if let Some(depth) = indent {
                    newline(out, depth + 1);
                }
                write_string(out, k);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write(out, item, indent.map(|d| d + 1));
            }
            if let Some(depth) = indent {
                newline(out, depth);
            }
            out.push('}');
        }
    }
}

/// The internal Pod spec as `json.Marshal` writes it.
pub(crate) fn pod_spec_json(spec: Option<&Value>) -> String {
    let mut out = String::new();
    write(&mut out, &pod_spec(spec), None);
    out
}

/// The internal Pod spec as `json.MarshalIndent(spec, "", " ")` writes it.
pub(crate) fn pod_spec_json_indented(spec: Option<&Value>) -> String {
    let mut out = String::new();
    write(&mut out, &pod_spec(spec), Some(0));
    out
}

/// A struct of the given fields and (plain) values, in that order.
pub(crate) fn ordered(fields: &[(&str, Value)]) -> Value {
    // Carried as an array of pairs so that the order survives until it is written.
    Value::Array(
        fields
            .iter()
            .map(|(k, v)| json_pair(k, v.clone()))
            .collect(),
    )
}

const PAIR_MARKER: &str = "\u{0}go-field";

fn json_pair(k: &str, v: Value) -> Value {
    Value::Array(vec![Value::from(PAIR_MARKER), Value::from(k), v])
}

fn from_ordered(v: &Value) -> Go {
    match v {
        Value::Array(items)
            if items
                .iter()
                .all(|i| i.get(0).and_then(Value::as_str) == Some(PAIR_MARKER))
                && !items.is_empty() =>
        {
            Go::Object(
                items
                    .iter()
                    .map(|i| {
                        (
                            i.get(1)
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                            from_ordered(i.get(2).unwrap_or(&Value::Null)),
                        )
                    })
                    .collect(),
            )
        }
        other => plain(other),
    }
}

/// A struct of the given Go fields (values as they are, or [`ordered`] structs), as
/// `json.MarshalIndent(value, "", " ")` writes it.
pub(crate) fn indented(fields: &[(&str, Value)]) -> String {
    let mut out = String::new();
    write(&mut out, &from_ordered(&ordered(fields)), Some(0));
    out
}

/// An ephemeral container as `json.MarshalIndent(container, "", " ")` writes its internal type.
pub(crate) fn ephemeral_container_json_indented(container: &Value) -> String {
    let mut out = String::new();
    write(
        &mut out,
        &object(EPHEMERAL_CONTAINER, container.as_object()),
        Some(0),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_projected_token_volume_should_encode_with_every_source_field() {
        let spec = json!({"volumes": [{"name": "kube-api-access-x", "projected": {
            "defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}]});
        let text = pod_spec_json(Some(&spec));
        assert!(
            text.starts_with(
                r#"{"Volumes":[{"Name":"kube-api-access-x","HostPath":null,"EmptyDir":null,"#
            ),
            "{text}"
        );
        assert!(text.contains(r#""Projected":{"Sources":[{"Secret":null,"DownwardAPI":null,"ConfigMap":null,"ServiceAccountToken":{"Audience":"","ExpirationSeconds":3607,"Path":"token"},"ClusterTrustBundle":null,"PodCertificate":null},{"Secret":null,"DownwardAPI":null,"ConfigMap":{"Name":"kube-root-ca.crt","Items":[{"Key":"ca.crt","Path":"ca.crt","Mode":null}],"Optional":null},"#), "{text}");
        assert!(
            text.contains(r#""DefaultMode":420},"PortworxVolume":null"#),
            "{text}"
        );
    }

    #[test]
    fn probes_and_security_contexts_should_encode_in_go_order() {
        let spec = json!({"containers": [{"name": "a", "image": "i",
            "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
            "securityContext": {"runAsNonRoot": true, "capabilities": {"drop": ["ALL"]}}}]});
        let text = pod_spec_json(Some(&spec));
        assert!(text.contains(r#""ReadinessProbe":{"Exec":null,"HTTPGet":{"Path":"/","Port":"http","Host":"","Scheme":"","HTTPHeaders":null},"TCPSocket":null,"GRPC":null,"InitialDelaySeconds":0,"TimeoutSeconds":0,"PeriodSeconds":5,"SuccessThreshold":0,"FailureThreshold":0,"TerminationGracePeriodSeconds":null}"#), "{text}");
        assert!(
            text.contains(
                r#""SecurityContext":{"Capabilities":{"Add":null,"Drop":["ALL"]},"Privileged":null"#
            ),
            "{text}"
        );
    }

    #[test]
    fn a_pod_spec_should_encode_as_the_internal_go_type() {
        let spec = json!({"containers": [{"name": "app", "image": "busybox",
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent", "resources": {}}],
            "restartPolicy": "Never", "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst", "automountServiceAccountToken": false,
            "securityContext": {}, "schedulerName": "default-scheduler"});
        let text = pod_spec_json(Some(&spec));
        assert!(text.starts_with(r#"{"Volumes":null,"InitContainers":null,"Containers":[{"Name":"app","Image":"busybox","Command":null"#), "{text}");
        assert!(text.contains(
            r#""Resources":{"Limits":null,"Requests":null,"Claims":null},"ResizePolicy":null"#
        ));
        assert!(text.contains(r#""SecurityContext":{"HostNetwork":false,"HostPID":false,"HostIPC":false,"ShareProcessNamespace":null"#));
        assert!(
            text.ends_with(r#""Resources":null,"HostnameOverride":null,"SchedulingGroup":null}"#)
        );
        let indented = pod_spec_json_indented(Some(&spec));
        assert!(indented.starts_with("{\n \"Volumes\": null,\n \"InitContainers\": null,\n \"Containers\": [\n  {\n   \"Name\": \"app\","), "{indented}");
    }
}
