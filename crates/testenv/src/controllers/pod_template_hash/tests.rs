use serde_json::json;

use super::*;

/// The `spec.template` of a Deployment as kube-apiserver v1.36.2 stored it (the create answer
/// of the with-controllers corpus), with the given labels.
fn pause_template(labels: Value) -> Value {
    json!({
        "metadata": {"labels": labels},
        "spec": {
            "containers": [{
                "name": "app",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent"
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "automountServiceAccountToken": false,
            "securityContext": {},
            "schedulerName": "default-scheduler"
        }
    })
}

/// The printout of a value of the type named `name` (as go-spew's `%#v` writes it).
fn printout_of(name: &str, v: &Value) -> String {
    let ty = TYPES.iter().position(|t| t.name == name).expect(name) as u16;
    let mut out = Vec::new();
    Printer {
        out: &mut out,
        ignore_next_type: false,
    }
    .format(ty, present(Some(v)));
    String::from_utf8(out).unwrap()
}

#[test]
fn the_hashes_of_real_kube_controller_manager_should_come_out() {
    // gc-deploy-background: Deployment `web`.
    assert_eq!(
        compute(&pause_template(json!({"app": "web"})), None),
        "798cc8f68f"
    );
    // upd-generation-deploy (st-scale-apply, upd-deploy-strategy-switch ...): `d1`.
    assert_eq!(
        compute(&pause_template(json!({"app": "d1"})), None),
        "86657987d8"
    );
    // st-deploy-scale-selector: `d1` with two labels.
    assert_eq!(
        compute(&pause_template(json!({"app": "d1", "tier": "a"})), None),
        "8596bc5d47"
    );
}
