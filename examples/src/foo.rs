//! The `Foo` custom resource of kubernetes/sample-controller
//! (`samplecontroller.k8s.io/v1alpha1`), with its CRD generated from the
//! Rust type.
//!
//! The group is sample-controller's own, a protected `*.k8s.io` group, so the CRD carries
//! the `api-approved.kubernetes.io: "unapproved, experimental-only"` annotation a real
//! kube-apiserver demands before it accepts the CRD.

use kube::CustomResource;
use kube::CustomResourceExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a Foo asks for: a Deployment named `deploymentName` with `replicas`
/// replicas.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    plural = "foos",
    namespaced,
    status = "FooStatus",
    // `*.k8s.io` groups are protected: kube-apiserver refuses (422) a CRD in one without this
    // annotation. Upstream sample-controller declares itself unapproved in the same words.
    annotation("api-approved.kubernetes.io", "unapproved, experimental-only"),
    printcolumn = r#"{"name":"Deployment","type":"string","jsonPath":".spec.deploymentName"}"#,
    printcolumn = r#"{"name":"Desired","type":"integer","jsonPath":".spec.replicas"}"#,
    printcolumn = r#"{"name":"Available","type":"integer","jsonPath":".status.availableReplicas"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// The name of the Deployment the Foo owns.
    pub deployment_name: String,
    /// How many replicas the Deployment should run.
    pub replicas: i32,
}

/// What the Foo's Deployment reports.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// The Deployment's `status.availableReplicas`.
    pub available_replicas: i32,
}

impl Foo {
    /// The Foo's CRD as JSON, for `kubectl apply -f -`.
    pub fn crd_json() -> crate::Result<String> {
        let crd = Foo::crd();
        serde_json::to_value(&crd)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .map_err(|e| crate::Error::Serialize(e.to_string()))
    }

    /// The Foo's available replicas (0 without a status).
    pub fn available_replicas(&self) -> i32 {
        self.status.as_ref().map_or(0, |s| s.available_replicas)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::Resource;

    #[test]
    fn the_crd_should_describe_a_namespaced_foo_with_a_status_subresource() {
        let crd = Foo::crd();
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some("foos.samplecontroller.k8s.io")
        );
        assert_eq!(crd.spec.scope, "Namespaced");
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1alpha1");
        assert!(
            version
                .subresources
                .as_ref()
                .and_then(|s| s.status.as_ref())
                .is_some()
        );
        let schema = serde_json::to_value(&version.schema).unwrap_or_default();
        let spec = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"];
        assert!(spec["deploymentName"].is_object());
        assert!(spec["replicas"].is_object());
        assert_eq!(Foo::api_version(&()), "samplecontroller.k8s.io/v1alpha1");
    }

    #[test]
    fn the_crd_should_carry_the_annotation_a_protected_group_needs_on_a_real_cluster() {
        // kube-apiserver's CRD validation: a group that is `k8s.io`, `kubernetes.io` or a
        // subdomain of either needs `api-approved.kubernetes.io` set to a URL or to a value
        // starting with "unapproved"; without it the create is refused with 422.
        let crd = Foo::crd();
        let group = &crd.spec.group;
        let protected = ["k8s.io", "kubernetes.io"]
            .iter()
            .any(|g| group == g || group.ends_with(&format!(".{g}")));
        assert!(protected, "{group} is a protected group");
        let annotations = crd.metadata.annotations.unwrap_or_default();
        let approval = annotations
            .get("api-approved.kubernetes.io")
            .map(String::as_str);
        assert_eq!(approval, Some("unapproved, experimental-only"));
        let printed = Foo::crd_json().unwrap_or_default();
        assert!(
            printed.contains("\"api-approved.kubernetes.io\""),
            "{printed}"
        );
    }

    #[test]
    fn a_foo_should_serialise_with_sample_controllers_field_names() {
        let mut foo = Foo::new(
            "example-foo",
            FooSpec {
                deployment_name: "d".into(),
                replicas: 2,
            },
        );
        foo.status = Some(FooStatus {
            available_replicas: 1,
        });
        let json = serde_json::to_value(&foo).unwrap_or_default();
        assert_eq!(json["spec"]["deploymentName"], "d");
        assert_eq!(json["status"]["availableReplicas"], 1);
    }
}
