//! The `PodSecurity` admission plugin (pod-security-admission with its default configuration:
//! every mode `privileged`, `latest`, no exemptions). A namespace chooses its levels with the
//! labels `pod-security.kubernetes.io/<mode>` (`privileged`, `baseline` or `restricted`) and
//! `pod-security.kubernetes.io/<mode>-version` (`latest` or `v1.x`), for the modes `enforce`,
//! `audit` and `warn`; a mode without a level label takes `enforce`'s.
//!
//! - A new Pod that breaks the `enforce` level is refused (`403` `violates PodSecurity
//!   "restricted:latest": <reason> (<detail>), ...`); one that breaks the `warn` level gets a
//!   `Warning` (`would violate PodSecurity "baseline:v1.36": host namespaces (hostNetwork=true)`),
//!   unless it is refused.
//! - A new workload (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob,
//!   ReplicationController, PodTemplate) is never refused: its pod template gets the `warn`
//!   level's warning.
//! - A namespace whose labels become invalid is refused (`422`), as a new one with invalid labels
//!   is; a namespace whose `enforce` level or version changes (to another than `privileged`)
//!   is updated with `Warning`s naming the existing Pods that break the new level (`existing
//!   pods in namespace "ns" violate the new PodSecurity enforce level "restricted:latest"`,
//!   then one `<pod>[ (and N other pods)]: <reasons>` per distinct set of reasons, sorted).
//! - `audit` goes to the audit log, which kcr-testenv does not keep.
//!
//! The checks are pod-security-admission's for the `latest` version, in its order (by check
//! id), each with its reason and detail; a check newer than the namespace's version does not
//! apply (restricted `seccompProfile` from v1.19, `unrestricted capabilities` from v1.22,
//! `runAsUser=0` from v1.23). Not ported: the `probe or lifecycle host` check of v1.34, the
//! relaxations for Windows pods and user namespaces, and the checks of Pod updates.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{Attributes, Plugin};
use crate::status::{ApiError, ApiResult};

const PREFIX: &str = "pod-security.kubernetes.io/";

/// The plugin.
pub(super) struct PodSecurity;

/// A level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// A level and version (`None`: `latest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Policy {
    level: Level,
    minor: Option<u32>,
}

impl Policy {
    fn printed(self) -> String {
        match self.minor {
            None => format!("{}:latest", self.level.name()),
            Some(m) => format!("{}:v1.{m}", self.level.name()),
        }
    }

    /// Whether a check introduced in v1.`since` applies.
    fn has(self, since: u32) -> bool {
        self.minor.is_none_or(|m| m >= since)
    }
}

/// The errors of a namespace's labels: `(label, value, message)`.
type LabelErrors = Vec<(String, String, &'static str)>;

/// The policy of one mode; invalid labels make it `restricted:latest`.
fn mode_policy(
    labels: &Map<String, Value>,
    mode: &str,
    errors: &mut LabelErrors,
) -> Option<Policy> {
    let level_key = format!("{PREFIX}{mode}");
    let version_key = format!("{PREFIX}{mode}-version");
    let level = labels.get(&level_key).and_then(Value::as_str);
    let version = labels.get(&version_key).and_then(Value::as_str);
    let level = match level {
        None => None,
        Some("privileged") => Some(Level::Privileged),
        Some("baseline") => Some(Level::Baseline),
        Some("restricted") => Some(Level::Restricted),
        Some(other) => {
            errors.push((
                level_key,
                other.to_owned(),
                "must be one of privileged, baseline, restricted",
            ));
            Some(Level::Restricted)
        }
    };
    let minor = match version {
        None | Some("latest") => None,
        Some(v) => match v.strip_prefix("v1.").and_then(|m| {
            (!m.is_empty()
                && m.chars().all(|c| c.is_ascii_digit())
                && (m == "0" || !m.starts_with('0')))
            .then(|| m.parse::<u32>().ok())
            .flatten()
        }) {
            Some(m) => Some(m),
            None => {
                errors.push((version_key, v.to_owned(), "must be \"latest\" or \"v1.x\""));
                None
            }
        },
    };
    level.map(|level| Policy { level, minor })
}

/// The namespace's enforce and warn policies, and the errors of its labels.
fn policies(labels: &Map<String, Value>) -> (Policy, Policy, LabelErrors) {
    let mut errors = Vec::new();
    let default = Policy {
        level: Level::Privileged,
        minor: None,
    };
    let enforce = mode_policy(labels, "enforce", &mut errors);
    let audit = mode_policy(labels, "audit", &mut errors);
    let warn = mode_policy(labels, "warn", &mut errors);
    let _ = audit;
    let enforce_or_default = enforce.unwrap_or(default);
    (
        enforce_or_default,
        warn.or(enforce).unwrap_or(default),
        errors,
    )
}

fn quote_all<I: IntoIterator<Item = S>, S: AsRef<str>>(items: I) -> String {
    items
        .into_iter()
        .map(|s| format!("{:?}", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural<'a>(singular: &'a str, plural: &'a str, n: usize) -> &'a str {
    if n == 1 { singular } else { plural }
}

/// The containers of a pod spec in pod-security-admission's order (init, regular, ephemeral).
fn containers(spec: &Value) -> Vec<&Value> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .filter_map(|l| spec.get(*l).and_then(Value::as_array))
        .flatten()
        .collect()
}

fn name(c: &Value) -> &str {
    c.get("name").and_then(Value::as_str).unwrap_or_default()
}

fn pod_sc<'a>(spec: &'a Value, field: &str) -> Option<&'a Value> {
    spec.get("securityContext")?.get(field)
}

fn sc<'a>(c: &'a Value, field: &str) -> Option<&'a Value> {
    c.get("securityContext")?.get(field)
}

/// A failed check: its reason and detail.
type Failure = (&'static str, String);

/// `containers "a", "b"` for the names.
fn containers_phrase(names: &[&str]) -> String {
    format!(
        "{} {}",
        plural("container", "containers", names.len()),
        quote_all(names)
    )
}

fn allow_privilege_escalation(spec: &Value) -> Option<Failure> {
    let bad: Vec<&str> = containers(spec)
        .into_iter()
        .filter(|c| sc(c, "allowPrivilegeEscalation").and_then(Value::as_bool) != Some(false))
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| {
        (
            "allowPrivilegeEscalation != false",
            format!(
                "{} must set securityContext.allowPrivilegeEscalation=false",
                containers_phrase(&bad)
            ),
        )
    })
}

const BASELINE_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn added_capabilities(c: &Value) -> Vec<&str> {
    c.pointer("/securityContext/capabilities/add")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn capabilities_baseline(spec: &Value) -> Option<Failure> {
    let mut bad = Vec::new();
    let mut caps = BTreeSet::new();
    for c in containers(spec) {
        let forbidden: Vec<&str> = added_capabilities(c)
            .into_iter()
            .filter(|cap| !BASELINE_CAPABILITIES.contains(cap))
            .collect();
        if !forbidden.is_empty() {
            bad.push(name(c));
            caps.extend(forbidden);
        }
    }
    (!bad.is_empty()).then(|| {
        (
            "non-default capabilities",
            format!(
                "{} must not include {} in securityContext.capabilities.add",
                containers_phrase(&bad),
                quote_all(&caps)
            ),
        )
    })
}

fn capabilities_restricted(spec: &Value) -> Option<Failure> {
    let mut missing_drop = Vec::new();
    let mut adding = Vec::new();
    let mut caps = BTreeSet::new();
    for c in containers(spec) {
        let Some(capabilities) = sc(c, "capabilities").filter(|v| !v.is_null()) else {
            missing_drop.push(name(c));
            continue;
        };
        let drops_all = capabilities
            .get("drop")
            .and_then(Value::as_array)
            .is_some_and(|d| d.iter().any(|x| x.as_str() == Some("ALL")));
        if !drops_all {
            missing_drop.push(name(c));
        }
        let forbidden: Vec<&str> = added_capabilities(c)
            .into_iter()
            .filter(|cap| *cap != "NET_BIND_SERVICE")
            .collect();
        if !forbidden.is_empty() {
            adding.push(name(c));
            caps.extend(forbidden);
        }
    }
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&missing_drop)
        ));
    }
    if !adding.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            quote_all(&caps)
        ));
    }
    (!details.is_empty()).then(|| ("unrestricted capabilities", details.join("; ")))
}

fn host_namespaces(spec: &Value) -> Option<Failure> {
    let set: Vec<&str> = [
        ("hostNetwork", "hostNetwork=true"),
        ("hostPID", "hostPID=true"),
        ("hostIPC", "hostIPC=true"),
    ]
    .into_iter()
    .filter(|(f, _)| spec.get(*f).and_then(Value::as_bool) == Some(true))
    .map(|(_, s)| s)
    .collect();
    (!set.is_empty()).then(|| ("host namespaces", set.join(", ")))
}

fn volumes(spec: &Value) -> Vec<&Value> {
    spec.get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect()
}

fn host_path_volumes(spec: &Value) -> Option<Failure> {
    let bad: Vec<&str> = volumes(spec)
        .into_iter()
        .filter(|v| v.get("hostPath").is_some_and(|h| !h.is_null()))
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| {
        (
            "hostPath volumes",
            format!(
                "{} {}",
                plural("volume", "volumes", bad.len()),
                quote_all(&bad)
            ),
        )
    })
}

fn host_ports(spec: &Value) -> Option<Failure> {
    let mut bad = Vec::new();
    let mut ports = BTreeSet::new();
    for c in containers(spec) {
        let used: Vec<String> = c
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("hostPort").and_then(Value::as_i64))
            .filter(|p| *p != 0)
            .map(|p| p.to_string())
            .collect();
        if !used.is_empty() {
            bad.push(name(c));
            ports.extend(used);
        }
    }
    (!bad.is_empty()).then(|| {
        (
            "hostPort",
            format!(
                "{} {} {} {}",
                containers_phrase(&bad),
                plural("uses", "use", bad.len()),
                plural("hostPort", "hostPorts", ports.len()),
                ports.into_iter().collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

fn privileged(spec: &Value) -> Option<Failure> {
    let bad: Vec<&str> = containers(spec)
        .into_iter()
        .filter(|c| sc(c, "privileged").and_then(Value::as_bool) == Some(true))
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| {
        (
            "privileged",
            format!(
                "{} must not set securityContext.privileged=true",
                containers_phrase(&bad)
            ),
        )
    })
}

fn proc_mount(spec: &Value) -> Option<Failure> {
    let mut bad = Vec::new();
    let mut types = BTreeSet::new();
    for c in containers(spec) {
        if let Some(t) = sc(c, "procMount").and_then(Value::as_str)
            && t != "Default"
        {
            bad.push(name(c));
            types.insert(t);
        }
    }
    (!bad.is_empty()).then(|| {
        (
            "procMount",
            format!(
                "{} must not set securityContext.procMount to {}",
                containers_phrase(&bad),
                quote_all(&types)
            ),
        )
    })
}

/// The volume types the restricted level allows.
const RESTRICTED_VOLUME_TYPES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

fn restricted_volumes(spec: &Value) -> Option<Failure> {
    let mut bad = Vec::new();
    let mut types = BTreeSet::new();
    for v in volumes(spec) {
        let kinds: Vec<&str> = v
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, val)| *k != "name" && !val.is_null())
            .map(|(k, _)| k.as_str())
            .collect();
        let forbidden: Vec<&str> = kinds
            .iter()
            .copied()
            .filter(|k| !RESTRICTED_VOLUME_TYPES.contains(k))
            .collect();
        if kinds.is_empty() {
            bad.push(name(v));
            types.insert("unknown");
        } else if !forbidden.is_empty() {
            bad.push(name(v));
            types.extend(forbidden);
        }
    }
    (!bad.is_empty()).then(|| {
        (
            "restricted volume types",
            format!(
                "{} {} {} {} {}",
                plural("volume", "volumes", bad.len()),
                quote_all(&bad),
                plural("uses", "use", bad.len()),
                plural(
                    "restricted volume type",
                    "restricted volume types",
                    types.len()
                ),
                quote_all(&types)
            ),
        )
    })
}

/// `pod` and/or `containers "a"` that set a field to a forbidden value.
fn setters(pod_bad: bool, containers_bad: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    if pod_bad {
        out.push("pod".to_owned());
    }
    if !containers_bad.is_empty() {
        out.push(containers_phrase(containers_bad));
    }
    out
}

fn run_as_non_root(spec: &Value) -> Option<Failure> {
    let pod = pod_sc(spec, "runAsNonRoot").and_then(Value::as_bool);
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in containers(spec) {
        match sc(c, "runAsNonRoot").and_then(Value::as_bool) {
            Some(false) => explicit.push(name(c)),
            Some(true) => {}
            None if pod != Some(true) => implicit.push(name(c)),
            None => {}
        }
    }
    let bad = setters(pod == Some(false), &explicit);
    if !bad.is_empty() {
        return Some((
            "runAsNonRoot != true",
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                bad.join(" and ")
            ),
        ));
    }
    (!implicit.is_empty()).then(|| {
        (
            "runAsNonRoot != true",
            format!(
                "pod or {} must set securityContext.runAsNonRoot=true",
                containers_phrase(&implicit)
            ),
        )
    })
}

fn run_as_user(spec: &Value) -> Option<Failure> {
    let pod = pod_sc(spec, "runAsUser").and_then(Value::as_i64) == Some(0);
    let bad_containers: Vec<&str> = containers(spec)
        .into_iter()
        .filter(|c| sc(c, "runAsUser").and_then(Value::as_i64) == Some(0))
        .map(name)
        .collect();
    let bad = setters(pod, &bad_containers);
    (!bad.is_empty()).then(|| {
        (
            "runAsUser=0",
            format!("{} must not set runAsUser=0", bad.join(" and ")),
        )
    })
}

const SELINUX_TYPES: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

fn se_linux_options(spec: &Value) -> Option<Failure> {
    let mut types = BTreeSet::new();
    let (mut user, mut role) = (false, false);
    let mut check = |o: Option<&Value>| -> bool {
        let Some(o) = o.filter(|o| !o.is_null()) else {
            return false;
        };
        let mut bad = false;
        if let Some(t) = o.get("type").and_then(Value::as_str)
            && !SELINUX_TYPES.contains(&t)
        {
            types.insert(t.to_owned());
            bad = true;
        }
        if o.get("user")
            .and_then(Value::as_str)
            .is_some_and(|u| !u.is_empty())
        {
            user = true;
            bad = true;
        }
        if o.get("role")
            .and_then(Value::as_str)
            .is_some_and(|r| !r.is_empty())
        {
            role = true;
            bad = true;
        }
        bad
    };
    let pod_bad = check(pod_sc(spec, "seLinuxOptions"));
    let bad_containers: Vec<&str> = containers(spec)
        .into_iter()
        .filter(|c| check(sc(c, "seLinuxOptions")))
        .map(name)
        .collect();
    let bad = setters(pod_bad, &bad_containers);
    if bad.is_empty() {
        return None;
    }
    let mut details = Vec::new();
    if !types.is_empty() {
        details.push(format!(
            "{} {}",
            plural("type", "types", types.len()),
            quote_all(&types)
        ));
    }
    if user {
        details.push("user may not be set".to_owned());
    }
    if role {
        details.push("role may not be set".to_owned());
    }
    Some((
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            bad.join(" and "),
            details.join("; ")
        ),
    ))
}

fn seccomp_type(v: Option<&Value>) -> Option<&str> {
    v.filter(|v| !v.is_null())
        .map(|p| p.get("type").and_then(Value::as_str).unwrap_or_default())
}

fn seccomp_baseline(spec: &Value) -> Option<Failure> {
    let pod = seccomp_type(pod_sc(spec, "seccompProfile")) == Some("Unconfined");
    let bad_containers: Vec<&str> = containers(spec)
        .into_iter()
        .filter(|c| seccomp_type(sc(c, "seccompProfile")) == Some("Unconfined"))
        .map(name)
        .collect();
    let bad = setters(pod, &bad_containers);
    (!bad.is_empty()).then(|| {
        (
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to \"Unconfined\"",
                bad.join(" and ")
            ),
        )
    })
}

fn seccomp_restricted(spec: &Value) -> Option<Failure> {
    let valid = |t: &str| t == "RuntimeDefault" || t == "Localhost";
    let mut bad_values = BTreeSet::new();
    let pod = seccomp_type(pod_sc(spec, "seccompProfile"));
    let pod_bad = pod.is_some_and(|t| !valid(t));
    if let Some(t) = pod.filter(|t| !valid(t)) {
        bad_values.insert(t.to_owned());
    }
    let pod_set = pod.is_some_and(valid);
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in containers(spec) {
        match seccomp_type(sc(c, "seccompProfile")) {
            Some(t) if !valid(t) => {
                explicit.push(name(c));
                bad_values.insert(t.to_owned());
            }
            Some(_) => {}
            None if !pod_set => implicit.push(name(c)),
            None => {}
        }
    }
    let bad = setters(pod_bad, &explicit);
    if !bad.is_empty() {
        return Some((
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                bad.join(" and "),
                quote_all(&bad_values)
            ),
        ));
    }
    (!implicit.is_empty()).then(|| {
        (
            "seccompProfile",
            format!(
                "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
                containers_phrase(&implicit)
            ),
        )
    })
}

/// The safe sysctls, with the version that allowed each.
const SAFE_SYSCTLS: &[(&str, u32)] = &[
    ("kernel.shm_rmid_forced", 0),
    ("net.ipv4.ip_local_port_range", 0),
    ("net.ipv4.ip_unprivileged_port_start", 0),
    ("net.ipv4.tcp_syncookies", 0),
    ("net.ipv4.ping_group_range", 0),
    ("net.ipv4.ip_local_reserved_ports", 27),
    ("net.ipv4.tcp_keepalive_time", 29),
    ("net.ipv4.tcp_fin_timeout", 29),
    ("net.ipv4.tcp_keepalive_intvl", 29),
    ("net.ipv4.tcp_keepalive_probes", 29),
    ("net.ipv4.tcp_rmem", 32),
    ("net.ipv4.tcp_wmem", 32),
];

fn sysctls(spec: &Value, policy: Policy) -> Option<Failure> {
    let bad: Vec<&str> = pod_sc(spec, "sysctls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("name").and_then(Value::as_str))
        .filter(|n| {
            !SAFE_SYSCTLS
                .iter()
                .any(|(safe, since)| safe == n && policy.has(*since))
        })
        .collect();
    (!bad.is_empty()).then(|| ("forbidden sysctls", bad.join(", ")))
}

fn windows_host_process(spec: &Value) -> Option<Failure> {
    let host_process = |v: Option<&Value>| {
        v.and_then(|o| o.get("hostProcess"))
            .and_then(Value::as_bool)
            == Some(true)
    };
    let pod = host_process(pod_sc(spec, "windowsOptions"));
    let bad_containers: Vec<&str> = containers(spec)
        .into_iter()
        .filter(|c| host_process(sc(c, "windowsOptions")))
        .map(name)
        .collect();
    let bad = setters(pod, &bad_containers);
    (!bad.is_empty()).then(|| {
        (
            "hostProcess",
            format!(
                "{} must not set securityContext.windowsOptions.hostProcess=true",
                bad.join(" and ")
            ),
        )
    })
}

fn app_armor(spec: &Value, meta: Option<&Value>) -> Option<Failure> {
    let unconfined = |v: Option<&Value>| {
        v.and_then(|p| p.get("type")).and_then(Value::as_str) == Some("Unconfined")
    };
    let mut bad = Vec::new();
    if let Some(annotations) = meta
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
    {
        for (k, v) in annotations {
            if let Some(value) = v.as_str()
                && k.starts_with("container.apparmor.security.beta.kubernetes.io/")
                && value != "runtime/default"
                && !value.starts_with("localhost/")
            {
                bad.push(format!("{k}={value:?}"));
            }
        }
    }
    if unconfined(pod_sc(spec, "appArmorProfile")) {
        bad.push("pod must not set securityContext.appArmorProfile.type to \"Unconfined\"".into());
    }
    let bad_containers: Vec<&str> = containers(spec)
        .into_iter()
        .filter(|c| unconfined(sc(c, "appArmorProfile")))
        .map(name)
        .collect();
    if !bad_containers.is_empty() {
        bad.push(format!(
            "{} must not set securityContext.appArmorProfile.type to \"Unconfined\"",
            containers_phrase(&bad_containers)
        ));
    }
    (!bad.is_empty()).then(|| {
        (
            if bad.len() == 1 {
                "forbidden AppArmor profile"
            } else {
                "forbidden AppArmor profiles"
            },
            bad.join(", "),
        )
    })
}

/// The failures of a pod (its metadata and spec) at `policy`, in check-id order.
fn evaluate(policy: Policy, meta: Option<&Value>, spec: &Value) -> Vec<Failure> {
    let baseline = policy.level >= Level::Baseline;
    let restricted = policy.level == Level::Restricted;
    if !baseline {
        return Vec::new();
    }
    let checks: Vec<Option<Failure>> = vec![
        // allowPrivilegeEscalation
        restricted
            .then(|| allow_privilege_escalation(spec))
            .flatten(),
        // appArmorProfile
        app_armor(spec, meta),
        // capabilities_baseline (the restricted check replaces it from v1.22)
        if restricted && policy.has(22) {
            None
        } else {
            capabilities_baseline(spec)
        },
        // capabilities_restricted
        (restricted && policy.has(22))
            .then(|| capabilities_restricted(spec))
            .flatten(),
        // hostNamespaces
        host_namespaces(spec),
        // hostPathVolumes (the restricted volume check replaces it)
        if restricted {
            None
        } else {
            host_path_volumes(spec)
        },
        // hostPorts
        host_ports(spec),
        // privileged
        privileged(spec),
        // procMount
        proc_mount(spec),
        // restrictedVolumes
        restricted.then(|| restricted_volumes(spec)).flatten(),
        // runAsNonRoot
        restricted.then(|| run_as_non_root(spec)).flatten(),
        // runAsUser
        (restricted && policy.has(23))
            .then(|| run_as_user(spec))
            .flatten(),
        // seLinuxOptions
        se_linux_options(spec),
        // seccompProfile_baseline (the restricted check replaces it)
        if restricted && policy.has(19) {
            None
        } else if policy.has(19) {
            seccomp_baseline(spec)
        } else {
            None
        },
        // seccompProfile_restricted
        (restricted && policy.has(19))
            .then(|| seccomp_restricted(spec))
            .flatten(),
        // sysctls
        sysctls(spec, policy),
        // windowsHostProcess
        windows_host_process(spec),
    ];
    checks.into_iter().flatten().collect()
}

/// `reason (detail), ...`: pod-security-admission's `ForbiddenDetail` of several checks.
fn forbidden_detail(failures: &[Failure]) -> String {
    failures
        .iter()
        .map(|(reason, detail)| {
            if detail.is_empty() {
                (*reason).to_owned()
            } else {
                format!("{reason} ({detail})")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The pod template (metadata, spec) of a workload kind, if `a` writes one.
fn template<'a>(
    a: &Attributes<'_>,
    obj: &'a Map<String, Value>,
) -> Option<(Option<&'a Value>, &'a Value)> {
    if a.def.custom {
        return None;
    }
    let t = match (a.def.group.as_str(), a.def.plural.as_str()) {
        ("", "podtemplates") => obj.get("template")?,
        ("", "replicationcontrollers")
        | ("apps", "deployments" | "replicasets" | "statefulsets" | "daemonsets")
        | ("batch", "jobs") => obj.get("spec")?.get("template")?,
        ("batch", "cronjobs") => obj.get("spec")?.pointer("/jobTemplate/spec/template")?,
        _ => return None,
    };
    Some((t.get("metadata"), t.get("spec")?))
}

/// The labels of an object.
fn labels_of(v: &Value) -> Map<String, Value> {
    v.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// kube-apiserver's `422` for invalid policy labels of the namespace `name`.
fn invalid_labels(name: &str, errors: &LabelErrors) -> ApiError {
    let causes: Vec<(String, String)> = errors
        .iter()
        .map(|(label, value, why)| {
            (
                format!("metadata.labels[{label}]"),
                format!("Invalid value: {value:?}: {why}"),
            )
        })
        .collect();
    let causes: Vec<(&str, &str, String)> = causes
        .iter()
        .map(|(f, m)| (f.as_str(), "FieldValueInvalid", m.clone()))
        .collect();
    ApiError::invalid("", "Namespace", name, &causes)
}

/// The warnings about the Pods of `namespace` that break `enforce`.
fn existing_pods(a: &Attributes<'_>, namespace: &str, enforce: Policy) -> Vec<String> {
    let mut pods: Vec<Value> = a
        .store
        .keys("/pods", Some(namespace))
        .iter()
        .filter_map(|k| a.store.get("/pods", k).map(|s| (*s.value).clone()))
        .collect();
    // Pods without an owner first (their names are shown), then by name.
    pods.sort_by_key(|p| {
        (
            p.pointer("/metadata/ownerReferences").is_some(),
            p.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        )
    });
    let mut found: Vec<(String, String, usize)> = Vec::new();
    for p in &pods {
        let Some(spec) = p.get("spec") else {
            continue;
        };
        let failures = evaluate(enforce, p.get("metadata"), spec);
        if failures.is_empty() {
            continue;
        }
        let reasons = failures
            .iter()
            .map(|(r, _)| *r)
            .collect::<Vec<_>>()
            .join(", ");
        match found.iter_mut().find(|(r, _, _)| *r == reasons) {
            Some(entry) => entry.2 += 1,
            None => found.push((
                reasons,
                p.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                1,
            )),
        }
    }
    let mut lines: Vec<String> = found
        .into_iter()
        .map(|(reasons, pod, count)| match count {
            1 => format!("{pod}: {reasons}"),
            2 => format!("{pod} (and 1 other pod): {reasons}"),
            n => format!("{pod} (and {} other pods): {reasons}", n - 1),
        })
        .collect();
    lines.sort();
    if lines.is_empty() {
        return lines;
    }
    let mut warnings = vec![format!(
        "existing pods in namespace {namespace:?} violate the new PodSecurity enforce level {:?}",
        enforce.printed()
    )];
    warnings.extend(lines);
    warnings
}

impl Plugin for PodSecurity {
    fn validate_update(&self, a: &Attributes<'_>, old: &Value, new: &Value) -> ApiResult<()> {
        if !a.is_core("Namespace") || a.subresource.is_some() {
            return Ok(());
        }
        let (new_enforce, _, errors) = policies(&labels_of(new));
        if !errors.is_empty() {
            return Err(invalid_labels(a.name, &errors));
        }
        let (old_enforce, _, _) = policies(&labels_of(old));
        if new_enforce == old_enforce || new_enforce.level == Level::Privileged {
            return Ok(());
        }
        let warnings = existing_pods(a, a.name, new_enforce);
        a.warnings.lock().extend(warnings);
        Ok(())
    }

    fn name(&self) -> &'static str {
        "PodSecurity"
    }

    fn validate_create(&self, a: &Attributes<'_>, obj: &Map<String, Value>) -> ApiResult<()> {
        if a.is_core("Namespace") {
            let labels = obj
                .get("metadata")
                .and_then(|m| m.get("labels"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let (_, _, errors) = policies(&labels);
            if errors.is_empty() {
                return Ok(());
            }
            return Err(invalid_labels(a.name, &errors));
        }
        if !a.def.namespaced {
            return Ok(());
        }
        let is_pod = a.is_core("Pod");
        let (meta, spec) = if is_pod {
            let Some(spec) = obj.get("spec") else {
                return Ok(());
            };
            (obj.get("metadata"), spec)
        } else {
            match template(a, obj) {
                Some(t) => t,
                None => return Ok(()),
            }
        };
        let Some(namespace) = a.store.get("/namespaces", a.namespace) else {
            return Ok(());
        };
        let labels = namespace
            .value
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let (enforce, warn, _) = policies(&labels);
        if is_pod {
            let failures = evaluate(enforce, meta, spec);
            if !failures.is_empty() {
                return Err(a.forbidden(&format!(
                    "violates PodSecurity {:?}: {}",
                    enforce.printed(),
                    forbidden_detail(&failures)
                )));
            }
        }
        let failures = evaluate(warn, meta, spec);
        if !failures.is_empty() {
            a.warnings.lock().push(format!(
                "would violate PodSecurity {:?}: {}",
                warn.printed(),
                forbidden_detail(&failures)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn restricted() -> Policy {
        Policy {
            level: Level::Restricted,
            minor: None,
        }
    }

    #[test]
    fn a_default_pod_should_break_four_restricted_checks() {
        let spec = json!({"containers": [{"name": "app"}]});
        let reasons: Vec<&str> = evaluate(restricted(), None, &spec)
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        assert_eq!(
            reasons,
            [
                "allowPrivilegeEscalation != false",
                "unrestricted capabilities",
                "runAsNonRoot != true",
                "seccompProfile"
            ]
        );
    }

    #[test]
    fn details_should_name_every_container_and_value() {
        let spec = json!({
            "hostIPC": true,
            "securityContext": {"runAsNonRoot": false},
            "containers": [
                {"name": "a", "securityContext": {"privileged": true, "capabilities": {"add": ["SYS_TIME", "NET_ADMIN"]}}},
                {"name": "b", "ports": [{"containerPort": 80, "hostPort": 80}, {"containerPort": 443, "hostPort": 443}],
                 "securityContext": {"privileged": true}}
            ],
            "volumes": [{"name": "h", "hostPath": {"path": "/"}}]
        });
        let baseline = Policy {
            level: Level::Baseline,
            minor: Some(36),
        };
        assert_eq!(
            forbidden_detail(&evaluate(baseline, None, &spec)),
            "non-default capabilities (container \"a\" must not include \"NET_ADMIN\", \"SYS_TIME\" in securityContext.capabilities.add), \
             host namespaces (hostIPC=true), hostPath volumes (volume \"h\"), \
             hostPort (container \"b\" uses hostPorts 443, 80), \
             privileged (containers \"a\", \"b\" must not set securityContext.privileged=true)"
        );
        let restricted = evaluate(restricted(), None, &spec);
        assert!(restricted.contains(&(
            "runAsNonRoot != true",
            "pod must not set securityContext.runAsNonRoot=false".into()
        )));
        assert!(restricted.contains(&(
            "restricted volume types",
            "volume \"h\" uses restricted volume type \"hostPath\"".into()
        )));
    }

    #[test]
    fn labels_should_be_checked_and_warn_should_follow_enforce() {
        let labels = json!({"pod-security.kubernetes.io/enforce": "baseline",
                            "pod-security.kubernetes.io/enforce-version": "v1.0.0"});
        let (enforce, warn, errors) = policies(labels.as_object().unwrap());
        assert_eq!(enforce.printed(), "baseline:latest");
        assert_eq!(warn, enforce);
        assert_eq!(errors[0].2, "must be \"latest\" or \"v1.x\"");
        let labels = json!({"pod-security.kubernetes.io/warn": "bogus"});
        let (_, warn, errors) = policies(labels.as_object().unwrap());
        assert_eq!(warn.level, Level::Restricted);
        assert_eq!(errors.len(), 1);
    }
}
