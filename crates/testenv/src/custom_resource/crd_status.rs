//! The status of a CustomResourceDefinition: as its create stores it (kube-apiserver's CRD
//! strategy sets only `storedVersions`; `conditions` is `null` and `acceptedNames` empty), and
//! as apiextensions-apiserver's controllers complete it right after: the naming controller
//! accepts the names (`NamesAccepted`), the establishing controller serves them
//! (`Established`), and for a CRD in a protected group the API-approval controller states the
//! approval (`KubernetesAPIApprovalPolicyConformant`). The controllers write through the
//! `status` subresource as the field manager `kube-apiserver`.

use serde_json::{Value, json};

use crate::validation::crd;

/// The field manager of the controllers' writes.
pub(crate) const MANAGER: &str = "kube-apiserver";

/// The status a create stores.
pub(crate) fn initial(crd_obj: &Value) -> Value {
    json!({
        "conditions": null,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": crd::initial_stored_versions(crd_obj),
    })
}

/// The status once the controllers have seen the new CRD (`now`: the time of their write).
pub(crate) fn established(crd_obj: &Value, now: &str) -> Value {
    let mut conditions = vec![
        json!({"type": "NamesAccepted", "status": "True", "lastTransitionTime": now,
            "reason": "NoConflicts", "message": "no conflicts found"}),
        json!({"type": "Established", "status": "True", "lastTransitionTime": now,
            "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}),
    ];
    conditions.extend(crd::approval_condition(crd_obj, now));
    let mut status = crd_obj.get("status").cloned().unwrap_or_else(|| json!({}));
    status["acceptedNames"] = crd_obj
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    status["conditions"] = Value::Array(conditions);
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controllers_should_accept_the_names_and_state_the_approval() {
        let c = json!({"metadata": {"annotations": {"api-approved.kubernetes.io": "unapproved"}},
            "spec": {"group": "a.k8s.io", "names": {"plural": "ws", "kind": "W"},
                "versions": [{"name": "v1", "storage": true}]}});
        let mut c = c;
        c["status"] = initial(&c);
        assert_eq!(c["status"]["conditions"], Value::Null);
        assert_eq!(c["status"]["storedVersions"], json!(["v1"]));
        let s = established(&c, "t");
        assert_eq!(s["acceptedNames"], json!({"plural": "ws", "kind": "W"}));
        let types: Vec<&Value> = s["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["type"])
            .collect();
        assert_eq!(
            types,
            [
                "NamesAccepted",
                "Established",
                "KubernetesAPIApprovalPolicyConformant"
            ]
        );
        assert_eq!(s["storedVersions"], json!(["v1"]));
    }
}
