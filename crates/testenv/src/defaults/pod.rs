//! Pod and PodSpec defaults, as kube-apiserver's core/v1 defaulters set them when a request is
//! decoded: `SetDefaults_PodSpec` (DNS and restart policy, security context, grace period,
//! scheduler) for every pod template, `SetDefaults_Pod` (service links, requests from limits,
//! host-network ports) for Pods only, and the defaults of containers, probes, ports, volumes and
//! field selectors inside them.

use serde_json::{Map, Value, json};

use super::json::{existing, items, object, or_insert, or_insert_int, or_insert_str};

/// The volume sources of a `Volume`, in the order of the Go struct's fields (the order in which
/// validation counts them).
pub(crate) const VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

/// The permission bits volume sources default their files to (0644).
const DEFAULT_MODE: i64 = 0o644;

/// The tag of an image reference, as the kubelet's image-name parser finds it: `latest` when
/// it names neither a tag nor a digest.
fn image_tag(image: &str) -> &str {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.split_once(':') {
        Some((_, tag)) => tag,
        None if digest.is_some() => "",
        None => "latest",
    }
}

/// The pull policy an image gets when none is set: `Always` for `:latest` (or no tag),
/// `IfNotPresent` otherwise.
pub(crate) fn pull_policy(image: &str) -> &'static str {
    if !image.is_empty() && image_tag(image) == "latest" {
        "Always"
    } else {
        "IfNotPresent"
    }
}

fn http_get(action: &mut Map<String, Value>) {
    or_insert_str(action, "path", "/");
    or_insert_str(action, "scheme", "HTTP");
}

fn probe(p: &mut Map<String, Value>) {
    or_insert_int(p, "timeoutSeconds", 1);
    or_insert_int(p, "periodSeconds", 10);
    or_insert_int(p, "successThreshold", 1);
    or_insert_int(p, "failureThreshold", 3);
    if let Some(h) = existing(p, "httpGet") {
        http_get(h);
    }
}

fn field_ref(holder: &mut Map<String, Value>) {
    if let Some(f) = existing(holder, "fieldRef") {
        or_insert_str(f, "apiVersion", "v1");
    }
}

fn container(c: &mut Map<String, Value>) {
    let image = c
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    or_insert_str(c, "imagePullPolicy", pull_policy(&image));
    or_insert_str(c, "terminationMessagePath", "/dev/termination-log");
    or_insert_str(c, "terminationMessagePolicy", "File");
    object(c, "resources");
    for port in items(c, "ports") {
        or_insert_str(port, "protocol", "TCP");
    }
    for name in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = existing(c, name) {
            probe(p);
        }
    }
    if let Some(lifecycle) = existing(c, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(h) = existing(lifecycle, hook).and_then(|h| existing(h, "httpGet")) {
                http_get(h);
            }
        }
    }
    for env in items(c, "env") {
        if let Some(from) = existing(env, "valueFrom") {
            field_ref(from);
        }
    }
}

fn downward_api_items(source: &mut Map<String, Value>) {
    for item in items(source, "items") {
        field_ref(item);
    }
}

fn volume(v: &mut Map<String, Value>) {
    if !VOLUME_SOURCES
        .iter()
        .any(|s| v.get(*s).is_some_and(|s| !s.is_null()))
    {
        v.insert("emptyDir".into(), json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = existing(v, source) {
            or_insert(s, "defaultMode", json!(DEFAULT_MODE));
        }
    }
    if let Some(s) = existing(v, "downwardAPI") {
        downward_api_items(s);
    }
    if let Some(p) = existing(v, "projected") {
        for source in items(p, "sources") {
            if let Some(d) = existing(source, "downwardAPI") {
                downward_api_items(d);
            }
            if let Some(t) = existing(source, "serviceAccountToken") {
                or_insert(t, "expirationSeconds", json!(3600));
            }
        }
    }
    if let Some(h) = existing(v, "hostPath") {
        or_insert(h, "type", json!(""));
    }
    if let Some(claim) = existing(v, "ephemeral")
        .and_then(|e| existing(e, "volumeClaimTemplate"))
        .and_then(|t| existing(t, "spec"))
    {
        persistent_volume_claim_spec(claim);
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`: a claim's volumes are file systems.
pub(crate) fn persistent_volume_claim_spec(spec: &mut Map<String, Value>) {
    or_insert_str(spec, "volumeMode", "Filesystem");
}

/// The defaults of a pod spec (a Pod's or a template's).
pub(crate) fn pod_spec(spec: &mut Map<String, Value>) {
    service_account_names(spec);
    or_insert_str(spec, "dnsPolicy", "ClusterFirst");
    or_insert_str(spec, "restartPolicy", "Always");
    object(spec, "securityContext");
    or_insert(spec, "terminationGracePeriodSeconds", json!(30));
    or_insert_str(spec, "schedulerName", "default-scheduler");
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for c in items(spec, list) {
            container(c);
        }
    }
    for v in items(spec, "volumes") {
        volume(v);
    }
}

/// The conversion of a v1 pod spec through kube-apiserver's internal one: the deprecated
/// `serviceAccount` is read only when `serviceAccountName` is empty, and is written back as
/// `serviceAccountName`.
fn service_account_names(spec: &mut Map<String, Value>) {
    let name = [spec.get("serviceAccountName"), spec.get("serviceAccount")]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|n| !n.is_empty())
        .map(str::to_owned);
    match name {
        Some(n) => {
            spec.insert("serviceAccountName".into(), Value::String(n.clone()));
            spec.insert("serviceAccount".into(), Value::String(n));
        }
        None => {
            spec.remove("serviceAccountName");
            spec.remove("serviceAccount");
        }
    }
}

/// The defaults of a pod template (`spec.template` of a workload).
pub(crate) fn pod_template(template: &mut Map<String, Value>) {
    if let Some(spec) = object(template, "spec") {
        pod_spec(spec);
    }
}

/// Requests a container does not set default to its limits.
fn requests_from_limits(c: &mut Map<String, Value>) {
    let Some(resources) = existing(c, "resources") else {
        return;
    };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
        return;
    };
    let Some(requests) = object(resources, "requests") else {
        return;
    };
    for (k, v) in limits {
        requests.entry(k).or_insert(v);
    }
}

/// The defaults of a Pod: its spec's, and those only Pods get.
pub(crate) fn pod(obj: &mut Map<String, Value>) {
    let Some(spec) = object(obj, "spec") else {
        return;
    };
    pod_spec(spec);
    for list in ["containers", "initContainers"] {
        for c in items(spec, list) {
            requests_from_limits(c);
        }
    }
    or_insert(spec, "enableServiceLinks", json!(true));
    if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
        for list in ["containers", "initContainers"] {
            for c in items(spec, list) {
                for port in items(c, "ports") {
                    let unset = port
                        .get("hostPort")
                        .is_none_or(|h| h.is_null() || h.as_i64() == Some(0));
                    if unset && let Some(p) = port.get("containerPort").cloned() {
                        port.insert("hostPort".into(), p);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pull_policy_should_follow_the_image_tag() {
        assert_eq!(pull_policy("nginx"), "Always");
        assert_eq!(pull_policy("nginx:latest"), "Always");
        assert_eq!(pull_policy("nginx:1.27"), "IfNotPresent");
        assert_eq!(pull_policy("localhost:5000/nginx"), "Always");
        assert_eq!(pull_policy("localhost:5000/nginx:1.0"), "IfNotPresent");
        assert_eq!(pull_policy("nginx@sha256:abcd"), "IfNotPresent");
        assert_eq!(pull_policy(""), "IfNotPresent");
    }

    #[test]
    fn a_pod_should_get_its_spec_and_container_defaults() {
        let mut pod = json!({"spec": {"containers": [{
            "name": "app", "image": "nginx:1.27",
            "ports": [{"containerPort": 8080}],
            "resources": {"limits": {"cpu": "500m"}},
            "readinessProbe": {"httpGet": {"port": 8080}}
        }], "volumes": [{"name": "v"}, {"name": "c", "configMap": {"name": "x"}}]}});
        super::pod(pod.as_object_mut().unwrap());
        let spec = &pod["spec"];
        assert_eq!(spec["dnsPolicy"], "ClusterFirst");
        assert_eq!(spec["restartPolicy"], "Always");
        assert_eq!(spec["securityContext"], json!({}));
        assert_eq!(spec["terminationGracePeriodSeconds"], 30);
        assert_eq!(spec["schedulerName"], "default-scheduler");
        assert_eq!(spec["enableServiceLinks"], true);
        let c = &spec["containers"][0];
        assert_eq!(c["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
        assert_eq!(c["terminationMessagePolicy"], "File");
        assert_eq!(c["ports"][0]["protocol"], "TCP");
        assert_eq!(c["resources"]["requests"], json!({"cpu": "500m"}));
        assert_eq!(
            c["readinessProbe"],
            json!({"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
                   "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                   "failureThreshold": 3})
        );
        assert_eq!(spec["volumes"][0]["emptyDir"], json!({}));
        assert_eq!(spec["volumes"][1]["configMap"]["defaultMode"], 420);
    }

    #[test]
    fn a_template_should_not_get_the_pod_only_defaults() {
        let mut template = json!({"spec": {"containers": [{"name": "a", "image": "x",
            "resources": {"limits": {"cpu": "1"}}}]}});
        pod_template(template.as_object_mut().unwrap());
        assert!(template["spec"].get("enableServiceLinks").is_none());
        assert!(
            template["spec"]["containers"][0]["resources"]
                .get("requests")
                .is_none()
        );
        assert_eq!(
            template["spec"]["containers"][0]["imagePullPolicy"],
            "Always"
        );
    }
}
