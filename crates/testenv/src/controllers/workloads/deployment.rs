//! kube-controller-manager's Deployment controller (`pkg/controller/deployment`): one sync of a
//! Deployment
//!
//! 1. claims the ReplicaSets of its namespace (`ClaimReplicaSets`: keeps its own selected ones,
//!    releases its own unselected ones, adopts selected orphans unless it is being deleted);
//! 2. a Deployment being deleted only gets its status brought up to date; a paused one gets
//!    `Progressing` `Unknown` `DeploymentPaused` (`DeploymentResumed` once resumed), its
//!    ReplicaSets scaled to its size and its old ReplicaSets beyond `revisionHistoryLimit`
//!    deleted; a change of `spec.replicas` alone (a *scaling event*: an active ReplicaSet's
//!    `desired-replicas` annotation differs) scales its ReplicaSets, proportionally while a
//!    rolling update is under way;
//! 3. otherwise it rolls out: the *new* ReplicaSet (its template equals the Deployment's but
//!    for the `pod-template-hash` label) is found or created as `<name>-<pod-template-hash>`
//!    (revision = the highest old revision + 1; annotations `revision`, `desired-replicas`,
//!    `max-replicas`; the hash label added to its selector, template and labels), its revision
//!    copied to the Deployment, then
//!    - `RollingUpdate`: the new ReplicaSet grows within `replicas + maxSurge`, old ones shrink
//!      while `replicas - maxUnavailable` Pods stay available (with Pods that never become
//!      ready, a rollout stalls exactly there, as on a cluster without kubelets);
//!    - `Recreate`: old ReplicaSets go to 0, and once none of their Pods is left the new one is
//!      created and grows to `replicas`;
//! 4. writes its status through `/status`: counts from its ReplicaSets, `observedGeneration`,
//!    `Available` (`MinimumReplicasAvailable` / `MinimumReplicasUnavailable`) and `Progressing`
//!    (`NewReplicaSetCreated`, `FoundNewReplicaSet`, `ReplicaSetUpdated`,
//!    `NewReplicaSetAvailable`, `ProgressDeadlineExceeded`), with kube-controller-manager's
//!    messages and its rules for when a condition's times change.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::util::{
    self, HASH_LABEL, REVISION, by_creation, by_revision, by_size, condition, equal_ignore_hash,
    has_progress_deadline, max_revision, max_surge, max_unavailable, new_condition, replicas,
    set_condition,
};
use super::{
    Claim, Client, DEPLOYMENTS, PODS, REPLICA_SETS, SyncResult, adopt, claim, collection_path,
    controller_of, deleting, int_at, name, namespace, release, selector_is_empty, selector_matches,
    str_at, uid,
};

const PROGRESSING: &str = "Progressing";
const AVAILABLE: &str = "Available";
const NEW_RS_AVAILABLE: &str = "NewReplicaSetAvailable";
const TIMED_OUT: &str = "ProgressDeadlineExceeded";
const PAUSED: &str = "DeploymentPaused";

/// One Deployment's sync state: the Deployment as last written and its paths.
struct Sync<'a> {
    client: &'a Client,
    d: Value,
    rs_path: String,
}

impl Sync<'_> {
    fn d_path(&self) -> String {
        format!(
            "{}/{}",
            collection_path(namespace(&self.d), "apps/v1", "deployments"),
            name(&self.d)
        )
    }

    fn status(&self) -> Map<String, Value> {
        self.d
            .get("status")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }

    /// `UpdateStatus` of the Deployment as it is now; it becomes what the server answered.
    async fn update_status(&mut self) -> SyncResult {
        let path = format!("{}/status", self.d_path());
        self.d = self.client.update(&path, &self.d).await?;
        Ok(())
    }

    /// `Update` of a ReplicaSet.
    async fn update_rs(&self, rs: &Value) -> SyncResult<Value> {
        let path = format!("{}/{}", self.rs_path, name(rs));
        self.client.update(&path, rs).await
    }
}

/// One sync of the Deployment stored at `key`; `Ok(Some(wait))`: sync again after `wait` (its
/// progress deadline falls due then).
pub(crate) async fn sync(client: &Client, key: &str) -> SyncResult<Option<Duration>> {
    let Some(d) = client.current(DEPLOYMENTS, key) else {
        return Ok(None);
    };
    let ns = namespace(&d).to_owned();
    let mut s = Sync {
        client,
        d: (*d).clone(),
        rs_path: collection_path(&ns, "apps/v1", "replicasets"),
    };
    if selector_is_empty(s.d.pointer("/spec/selector")) {
        // kube-controller-manager selects nothing with an empty selector; it only records the
        // generation it saw.
        if int_at(&s.d, "/status/observedGeneration") < int_at(&s.d, "/metadata/generation") {
            let generation = int_at(&s.d, "/metadata/generation");
            s.d["status"]["observedGeneration"] = json!(generation);
            s.update_status().await?;
        }
        return Ok(None);
    }
    let rs_list = claim_replica_sets(&s).await?;
    if deleting(&s.d) {
        let (new_rs, old) = all_replica_sets(&mut s, &rs_list, false).await?;
        sync_deployment_status(&mut s, &old, new_rs.as_ref()).await?;
        return Ok(None);
    }
    check_paused_conditions(&mut s).await?;
    if s.d.pointer("/spec/paused").and_then(Value::as_bool) == Some(true) {
        sync_scale(&mut s, &rs_list).await?;
        return Ok(None);
    }
    if is_scaling_event(&mut s, &rs_list).await? {
        sync_scale(&mut s, &rs_list).await?;
        return Ok(None);
    }
    if str_at(&s.d, "/spec/strategy/type") == "Recreate" {
        rollout_recreate(&mut s, &rs_list).await
    } else {
        rollout_rolling(&mut s, &rs_list).await
    }
}

/// `getReplicaSetsForDeployment`: the ReplicaSets it controls after adopting and releasing.
async fn claim_replica_sets(s: &Sync<'_>) -> SyncResult<Vec<Value>> {
    let all = s.client.list(REPLICA_SETS, namespace(&s.d));
    let selector = s.d.pointer("/spec/selector");
    let mut owned = Vec::new();
    let mut first_error = None;
    for rs in all {
        let selected = selector_matches(selector, rs.pointer("/metadata/labels"));
        let path = format!("{}/{}", s.rs_path, name(&rs));
        match claim(&s.d, &rs, selected) {
            Claim::Owned => owned.push((*rs).clone()),
            Claim::Release => {
                if let Err(e) = release(s.client, &s.d, &rs, &path).await {
                    first_error.get_or_insert(e);
                }
            }
            Claim::Adopt => {
                match adopt(s.client, &s.d, "Deployment", &s.d_path(), &rs, &path).await {
                    Ok(true) => {
                        // The adopted ReplicaSet as now stored.
                        let key = super::key_of(&rs);
                        if let Some(now) = s.client.current(REPLICA_SETS, &key) {
                            owned.push((*now).clone());
                        }
                    }
                    Ok(false) => {}
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            Claim::Ignore => {}
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(owned),
    }
}

/// `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet (created when asked and missing) and
/// the old ones.
async fn all_replica_sets(
    s: &mut Sync<'_>,
    rs_list: &[Value],
    create: bool,
) -> SyncResult<(Option<Value>, Vec<Value>)> {
    let template = s.d.pointer("/spec/template").cloned();
    let new_found = find_new(&s.d, rs_list);
    let old: Vec<Value> = rs_list
        .iter()
        .filter(|rs| new_found.as_ref().is_none_or(|n| uid(n) != uid(rs)))
        .filter(|rs| !equal_ignore_hash(rs.pointer("/spec/template"), template.as_ref()))
        .cloned()
        .collect();
    let new_rs = new_replica_set(s, rs_list, &old, new_found, create).await?;
    Ok((new_rs, old))
}

/// `FindNewReplicaSet`: the oldest ReplicaSet whose template equals the Deployment's.
fn find_new(d: &Value, rs_list: &[Value]) -> Option<Value> {
    let mut sorted: Vec<&Value> = rs_list.iter().collect();
    sorted.sort_by(|a, b| by_creation(a, b));
    sorted
        .into_iter()
        .find(|rs| equal_ignore_hash(rs.pointer("/spec/template"), d.pointer("/spec/template")))
        .cloned()
}

/// `getNewReplicaSet`.
async fn new_replica_set(
    s: &mut Sync<'_>,
    rs_list: &[Value],
    old: &[Value],
    existing: Option<Value>,
    create: bool,
) -> SyncResult<Option<Value>> {
    let new_revision = max_revision(old) + 1;
    if let Some(existing) = existing {
        let mut rs = existing.clone();
        let annotations_updated = util::set_new_rs_annotations(&s.d, &mut rs, new_revision, true);
        let min_ready = s.d.pointer("/spec/minReadySeconds").cloned();
        let min_ready_changed =
            int_at(&rs, "/spec/minReadySeconds") != int_at(&s.d, "/spec/minReadySeconds");
        if annotations_updated || min_ready_changed {
            match min_ready {
                Some(m) if m.as_i64() != Some(0) => rs["spec"]["minReadySeconds"] = m,
                _ => {
                    if let Some(spec) = rs.get_mut("spec").and_then(Value::as_object_mut) {
                        spec.remove("minReadySeconds");
                    }
                }
            }
            return s.update_rs(&rs).await.map(Some);
        }
        let revision = util::annotation(&rs, REVISION)
            .unwrap_or_default()
            .to_owned();
        let mut needs_update = util::set_deployment_revision(&mut s.d, &revision);
        let mut status = s.status();
        if has_progress_deadline(&s.d) && condition(&status, PROGRESSING).is_none() {
            set_condition(
                &mut status,
                new_condition(
                    PROGRESSING,
                    "True",
                    "FoundNewReplicaSet",
                    format!("Found new replica set {:?}", name(&rs)),
                ),
            );
            s.d["status"] = Value::Object(status);
            needs_update = true;
        }
        if needs_update {
            s.update_status().await?;
        }
        return Ok(Some(rs));
    }
    if !create {
        return Ok(None);
    }
    let mut template = s.d.pointer("/spec/template").cloned().unwrap_or(json!({}));
    let collision =
        s.d.pointer("/status/collisionCount")
            .and_then(Value::as_i64)
            .map(|c| c as i32);
    let hash = super::template_hash(&template, collision);
    let mut labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels.insert(HASH_LABEL.into(), json!(hash));
    if !template.get("metadata").is_some_and(Value::is_object) {
        template["metadata"] = json!({});
    }
    template["metadata"]["labels"] = Value::Object(labels.clone());
    let mut selector = s.d.pointer("/spec/selector").cloned().unwrap_or(json!({}));
    if !selector.get("matchLabels").is_some_and(Value::is_object) {
        selector["matchLabels"] = json!({});
    }
    selector["matchLabels"][HASH_LABEL] = json!(hash);
    let rs_name = format!("{}-{hash}", name(&s.d));
    let mut spec = json!({"replicas": 0, "selector": selector, "template": template});
    if int_at(&s.d, "/spec/minReadySeconds") != 0 {
        spec["minReadySeconds"] = s.d["spec"]["minReadySeconds"].clone();
    }
    let mut rs = json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": rs_name,
            "namespace": namespace(&s.d),
            "labels": labels,
            "ownerReferences": [super::controller_ref(&s.d, "Deployment")],
        },
        "spec": spec,
    });
    let mut all: Vec<Value> = old.to_vec();
    all.push(rs.clone());
    let count = util::new_rs_new_replicas(&s.d, &all, &rs);
    rs["spec"]["replicas"] = json!(count);
    util::set_new_rs_annotations(&s.d, &mut rs, new_revision, false);
    let (created, already_existed) = match s.client.create(&s.rs_path, &rs).await {
        Ok(c) => (c, false),
        Err(e) if e.code == 409 => {
            let stored = s
                .client
                .current(REPLICA_SETS, &super::key_of(&rs))
                .map(|v| (*v).clone());
            let ours = stored.as_ref().is_some_and(|st| {
                controller_of(st)
                    .and_then(|r| r.get("uid"))
                    .and_then(Value::as_str)
                    == Some(uid(&s.d))
                    && equal_ignore_hash(
                        st.pointer("/spec/template"),
                        s.d.pointer("/spec/template"),
                    )
            });
            match stored {
                Some(st) if ours => (st, true),
                _ => {
                    // A hash collision: count it and try again with the next hash.
                    let next = collision.unwrap_or(0) + 1;
                    s.d["status"]["collisionCount"] = json!(next);
                    s.update_status().await?;
                    return Err(e);
                }
            }
        }
        Err(e) if e.message.contains("because it is being terminated") => return Err(e),
        Err(e) => {
            if has_progress_deadline(&s.d) {
                let mut status = s.status();
                set_condition(
                    &mut status,
                    new_condition(
                        PROGRESSING,
                        "False",
                        "ReplicaSetCreateError",
                        format!("Failed to create new replica set {rs_name:?}: {e}"),
                    ),
                );
                s.d["status"] = Value::Object(status);
                let _ = s.update_status().await;
            }
            return Err(e);
        }
    };
    let _ = rs_list;
    let mut needs_update = util::set_deployment_revision(&mut s.d, &new_revision.to_string());
    if !already_existed && has_progress_deadline(&s.d) {
        let mut status = s.status();
        set_condition(
            &mut status,
            new_condition(
                PROGRESSING,
                "True",
                "NewReplicaSetCreated",
                format!("Created new replica set {:?}", name(&created)),
            ),
        );
        s.d["status"] = Value::Object(status);
        needs_update = true;
    }
    if needs_update {
        s.update_status().await?;
    }
    Ok(Some(created))
}

/// `checkPausedConditions`.
async fn check_paused_conditions(s: &mut Sync<'_>) -> SyncResult {
    if !has_progress_deadline(&s.d) {
        return Ok(());
    }
    let mut status = s.status();
    let reason = condition(&status, PROGRESSING).map(|c| str_at(c, "/reason").to_owned());
    if reason.as_deref() == Some(TIMED_OUT) {
        return Ok(());
    }
    let paused_cond = reason.as_deref() == Some(PAUSED);
    let paused = s.d.pointer("/spec/paused").and_then(Value::as_bool) == Some(true);
    let cond = if paused && !paused_cond {
        new_condition(
            PROGRESSING,
            "Unknown",
            PAUSED,
            "Deployment is paused".into(),
        )
    } else if !paused && paused_cond {
        new_condition(
            PROGRESSING,
            "Unknown",
            "DeploymentResumed",
            "Deployment is resumed".into(),
        )
    } else {
        return Ok(());
    };
    set_condition(&mut status, cond);
    s.d["status"] = Value::Object(status);
    s.update_status().await
}

/// `isScalingEvent`.
async fn is_scaling_event(s: &mut Sync<'_>, rs_list: &[Value]) -> SyncResult<bool> {
    let (new_rs, old) = all_replica_sets(s, rs_list, false).await?;
    let want = replicas(&s.d);
    Ok(old
        .iter()
        .chain(new_rs.as_ref())
        .filter(|rs| replicas(rs) > 0)
        .filter_map(util::desired_replicas_annotation)
        .any(|desired| desired != want))
}

/// `sync`: scale, clean up (paused), status.
async fn sync_scale(s: &mut Sync<'_>, rs_list: &[Value]) -> SyncResult {
    let (new_rs, old) = all_replica_sets(s, rs_list, false).await?;
    scale(s, new_rs.as_ref(), &old).await?;
    if s.d.pointer("/spec/paused").and_then(Value::as_bool) == Some(true) {
        cleanup(s, &old).await?;
    }
    sync_deployment_status(s, &old, new_rs.as_ref()).await
}

/// `scale`: brings the ReplicaSets to the Deployment's size.
async fn scale(s: &mut Sync<'_>, new_rs: Option<&Value>, old: &[Value]) -> SyncResult {
    if let Some(target) = active_or_latest(new_rs, old) {
        if replicas(&target) == replicas(&s.d) {
            return Ok(());
        }
        let want = replicas(&s.d);
        scale_replica_set(s, &target, want).await?;
        return Ok(());
    }
    if util::is_saturated(&s.d, new_rs) {
        for rs in old.iter().filter(|rs| replicas(rs) > 0) {
            scale_replica_set(s, rs, 0).await?;
        }
        return Ok(());
    }
    if !util::is_rolling(&s.d) {
        return Ok(());
    }
    let mut all: Vec<Value> = old
        .iter()
        .chain(new_rs)
        .filter(|rs| replicas(rs) > 0)
        .cloned()
        .collect();
    let current: i64 = all.iter().map(replicas).sum();
    let allowed = if replicas(&s.d) > 0 {
        replicas(&s.d) + max_surge(&s.d)
    } else {
        0
    };
    let to_add = allowed - current;
    if to_add > 0 {
        all.sort_by(|a, b| by_size(a, b, true));
    } else if to_add < 0 {
        all.sort_by(|a, b| by_size(a, b, false));
    }
    let mut added = 0;
    let mut sizes = Vec::with_capacity(all.len());
    for rs in &all {
        if to_add != 0 {
            let p = util::proportion(rs, &s.d, to_add, added);
            sizes.push(replicas(rs) + p);
            added += p;
        } else {
            sizes.push(replicas(rs));
        }
    }
    for (i, rs) in all.iter().enumerate() {
        if i == 0 && to_add != 0 {
            sizes[0] = (sizes[0] + to_add - added).max(0);
        }
        scale_replica_set(s, rs, sizes[i]).await?;
    }
    Ok(())
}

/// `FindActiveOrLatest`.
fn active_or_latest(new_rs: Option<&Value>, old: &[Value]) -> Option<Value> {
    if new_rs.is_none() && old.is_empty() {
        return None;
    }
    let mut old: Vec<&Value> = old.iter().collect();
    old.sort_by(|a, b| by_creation(b, a));
    let active: Vec<&Value> = old
        .iter()
        .copied()
        .chain(new_rs)
        .filter(|rs| replicas(rs) > 0)
        .collect();
    match active.len() {
        0 => new_rs.or(old.first().copied()).cloned(),
        1 => Some(active[0].clone()),
        _ => None,
    }
}

/// `scaleReplicaSet`: the size and the replicas annotations, by one `Update` when either
/// differs. Whether the size changed.
async fn scale_replica_set(s: &Sync<'_>, rs: &Value, size: i64) -> SyncResult<bool> {
    let desired = replicas(&s.d);
    let max = desired + max_surge(&s.d);
    let size_changes = replicas(rs) != size;
    if !size_changes && !util::replicas_annotations_need_update(rs, desired, max) {
        return Ok(false);
    }
    let mut copy = rs.clone();
    copy["spec"]["replicas"] = json!(size);
    util::set_replicas_annotations(&mut copy, desired, max);
    s.update_rs(&copy).await?;
    Ok(size_changes)
}

/// `scaleReplicaSetAndRecordEvent`: nothing when the size is already right.
async fn scale_and_record(s: &Sync<'_>, rs: &Value, size: i64) -> SyncResult<(bool, Value)> {
    if replicas(rs) == size {
        return Ok((false, rs.clone()));
    }
    let desired = replicas(&s.d);
    let max = desired + max_surge(&s.d);
    let mut copy = rs.clone();
    copy["spec"]["replicas"] = json!(size);
    util::set_replicas_annotations(&mut copy, desired, max);
    let updated = s.update_rs(&copy).await?;
    Ok((true, updated))
}

/// `rolloutRolling`.
async fn rollout_rolling(s: &mut Sync<'_>, rs_list: &[Value]) -> SyncResult<Option<Duration>> {
    let (new_rs, old) = all_replica_sets(s, rs_list, true).await?;
    let Some(new_rs) = new_rs else {
        return Ok(None);
    };
    let mut all: Vec<Value> = old.clone();
    all.push(new_rs.clone());
    // Scale up, if we can.
    let scaled_up = if replicas(&new_rs) == replicas(&s.d) {
        false
    } else if replicas(&new_rs) > replicas(&s.d) {
        let want = replicas(&s.d);
        scale_and_record(s, &new_rs, want).await?.0
    } else {
        let count = util::new_rs_new_replicas(&s.d, &all, &new_rs);
        scale_and_record(s, &new_rs, count).await?.0
    };
    if scaled_up {
        return sync_rollout_status(s, &old, Some(&new_rs)).await;
    }
    let active_old: Vec<Value> = old.iter().filter(|rs| replicas(rs) > 0).cloned().collect();
    if reconcile_old(s, &all, active_old, &new_rs).await? {
        return sync_rollout_status(s, &old, Some(&new_rs)).await;
    }
    let status = s.status();
    if complete(&s.d, &status) {
        cleanup(s, &old).await?;
    }
    sync_rollout_status(s, &old, Some(&new_rs)).await
}

/// `reconcileOldReplicaSets`: whether anything was scaled down.
async fn reconcile_old(
    s: &mut Sync<'_>,
    all: &[Value],
    mut old: Vec<Value>,
    new_rs: &Value,
) -> SyncResult<bool> {
    let old_count: i64 = old.iter().map(replicas).sum();
    if old_count == 0 {
        return Ok(false);
    }
    let all_count: i64 = all.iter().map(replicas).sum();
    let min_available = replicas(&s.d) - max_unavailable(&s.d);
    let new_unavailable = replicas(new_rs) - int_at(new_rs, "/status/availableReplicas");
    let max_scaled_down = all_count - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return Ok(false);
    }
    // Unhealthy replicas first.
    old.sort_by(by_creation);
    let mut cleaned = 0;
    for rs in &mut old {
        if cleaned >= max_scaled_down {
            break;
        }
        let available = int_at(rs, "/status/availableReplicas");
        if replicas(rs) == 0 || replicas(rs) == available {
            continue;
        }
        let down = (max_scaled_down - cleaned).min(replicas(rs) - available);
        let size = replicas(rs) - down;
        let (_, updated) = scale_and_record(s, rs, size).await?;
        cleaned += down;
        *rs = updated;
    }
    // Then as far as availability allows.
    let mut all: Vec<Value> = old.clone();
    all.push(new_rs.clone());
    let available: i64 = all
        .iter()
        .map(|rs| int_at(rs, "/status/availableReplicas"))
        .sum();
    let mut scaled = 0;
    if available > min_available {
        let total = available - min_available;
        old.sort_by(by_creation);
        for rs in &old {
            if scaled >= total {
                break;
            }
            if replicas(rs) == 0 {
                continue;
            }
            let down = replicas(rs).min(total - scaled);
            scale_and_record(s, rs, replicas(rs) - down).await?;
            scaled += down;
        }
    }
    Ok(cleaned + scaled > 0)
}

/// `rolloutRecreate`.
async fn rollout_recreate(s: &mut Sync<'_>, rs_list: &[Value]) -> SyncResult<Option<Duration>> {
    let (mut new_rs, mut old) = all_replica_sets(s, rs_list, false).await?;
    let mut scaled_down = false;
    for rs in old.iter().filter(|rs| replicas(rs) > 0) {
        if scale_and_record(s, rs, 0).await?.0 {
            scaled_down = true;
        }
    }
    if scaled_down {
        return sync_rollout_status(s, &old, new_rs.as_ref()).await;
    }
    if old_pods_running(s, new_rs.as_ref(), &old, rs_list) {
        return sync_rollout_status(s, &old, new_rs.as_ref()).await;
    }
    if new_rs.is_none() {
        (new_rs, old) = all_replica_sets(s, rs_list, true).await?;
    }
    if let Some(rs) = &new_rs {
        let want = replicas(&s.d);
        scale_and_record(s, rs, want).await?;
    }
    let status = s.status();
    if complete(&s.d, &status) {
        cleanup(s, &old).await?;
    }
    sync_rollout_status(s, &old, new_rs.as_ref()).await
}

/// `oldPodsRunning`: an old ReplicaSet still has Pods, or a Pod of one that is not the new one
/// has not ended.
fn old_pods_running(
    s: &Sync<'_>,
    new_rs: Option<&Value>,
    old: &[Value],
    rs_list: &[Value],
) -> bool {
    if old
        .iter()
        .map(|rs| int_at(rs, "/status/replicas"))
        .sum::<i64>()
        > 0
    {
        return true;
    }
    let selector = s.d.pointer("/spec/selector");
    let owners: Vec<&str> = rs_list
        .iter()
        .map(uid)
        .filter(|u| new_rs.is_none_or(|n| uid(n) != *u))
        .collect();
    s.client
        .list(PODS, namespace(&s.d))
        .iter()
        .filter(|p| selector_matches(selector, p.pointer("/metadata/labels")))
        .filter(|p| {
            controller_of(p)
                .and_then(|r| r.get("uid"))
                .and_then(Value::as_str)
                .is_some_and(|u| owners.contains(&u))
        })
        .any(|p| !matches!(str_at(p, "/status/phase"), "Failed" | "Succeeded"))
}

/// `cleanupDeployment`: old ReplicaSets beyond `revisionHistoryLimit`, oldest revisions first,
/// deleted once they have no replicas and their status is current.
async fn cleanup(s: &Sync<'_>, old: &[Value]) -> SyncResult {
    let Some(limit) =
        s.d.pointer("/spec/revisionHistoryLimit")
            .and_then(Value::as_i64)
    else {
        return Ok(());
    };
    let mut cleanable: Vec<&Value> = old.iter().filter(|rs| !deleting(rs)).collect();
    let diff = cleanable.len() as i64 - limit;
    if diff <= 0 {
        return Ok(());
    }
    cleanable.sort_by(|a, b| by_revision(a, b));
    for rs in cleanable.into_iter().take(diff as usize) {
        if int_at(rs, "/status/replicas") != 0
            || replicas(rs) != 0
            || int_at(rs, "/metadata/generation") > int_at(rs, "/status/observedGeneration")
        {
            continue;
        }
        match s
            .client
            .delete(&format!("{}/{}", s.rs_path, name(rs)))
            .await
        {
            Ok(_) => {}
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn sum(rss: &[&Value], pointer: &str) -> i64 {
    rss.iter().map(|rs| int_at(rs, pointer)).sum()
}

/// `calculateStatus`.
fn calculate_status(d: &Value, old: &[Value], new_rs: Option<&Value>) -> Map<String, Value> {
    let all: Vec<&Value> = old.iter().chain(new_rs).collect();
    let available = sum(&all, "/status/availableReplicas");
    let total: i64 = all.iter().map(|rs| replicas(rs)).sum();
    let unavailable = (total - available).max(0);
    let mut status = Map::new();
    let set = |s: &mut Map<String, Value>, k: &str, n: i64| {
        super::replica_set::set_count(s, k, n, false);
    };
    set(
        &mut status,
        "observedGeneration",
        int_at(d, "/metadata/generation"),
    );
    set(&mut status, "replicas", sum(&all, "/status/replicas"));
    set(
        &mut status,
        "updatedReplicas",
        new_rs.map_or(0, |rs| int_at(rs, "/status/replicas")),
    );
    set(
        &mut status,
        "readyReplicas",
        sum(&all, "/status/readyReplicas"),
    );
    set(&mut status, "availableReplicas", available);
    set(&mut status, "unavailableReplicas", unavailable);
    let terminating = all.iter().try_fold(0, |acc, rs| {
        rs.pointer("/status/terminatingReplicas")
            .and_then(Value::as_i64)
            .map(|n| acc + n)
    });
    if let Some(t) = terminating {
        status.insert("terminatingReplicas".into(), json!(t));
    }
    if let Some(c) = d.pointer("/status/conditions") {
        status.insert("conditions".into(), c.clone());
    }
    if let Some(c) = d.pointer("/status/collisionCount") {
        status.insert("collisionCount".into(), c.clone());
    }
    let cond = if available >= replicas(d) - max_unavailable(d) {
        new_condition(
            AVAILABLE,
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.".into(),
        )
    } else {
        new_condition(
            AVAILABLE,
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.".into(),
        )
    };
    set_condition(&mut status, cond);
    status
}

/// `syncDeploymentStatus`.
async fn sync_deployment_status(
    s: &mut Sync<'_>,
    old: &[Value],
    new_rs: Option<&Value>,
) -> SyncResult {
    let status = calculate_status(&s.d, old, new_rs);
    if s.d.get("status").and_then(Value::as_object) == Some(&status) {
        return Ok(());
    }
    s.d["status"] = Value::Object(status);
    s.update_status().await
}

/// `DeploymentComplete`.
fn complete(d: &Value, status: &Map<String, Value>) -> bool {
    let n = |k: &str| status.get(k).and_then(Value::as_i64).unwrap_or(0);
    let want = replicas(d);
    n("updatedReplicas") == want
        && n("replicas") == want
        && n("availableReplicas") == want
        && n("observedGeneration") >= int_at(d, "/metadata/generation")
}

/// `DeploymentProgressing`.
fn progressing(d: &Value, new: &Map<String, Value>) -> bool {
    let o = |k: &str| int_at(d, &format!("/status/{k}"));
    let n = |k: &str| new.get(k).and_then(Value::as_i64).unwrap_or(0);
    let old_old = o("replicas") - o("updatedReplicas");
    let new_old = n("replicas") - n("updatedReplicas");
    n("updatedReplicas") > o("updatedReplicas")
        || new_old < old_old
        || n("readyReplicas") > o("readyReplicas")
        || n("availableReplicas") > o("availableReplicas")
}

/// How long until the Progressing condition of `status` passes the deadline (`None`: no
/// deadline applies); zero or less when it has passed.
fn until_deadline(d: &Value, status: &Map<String, Value>, now: i64) -> Option<i64> {
    if !has_progress_deadline(d) {
        return None;
    }
    let c = condition(status, PROGRESSING)?;
    if matches!(str_at(c, "/reason"), NEW_RS_AVAILABLE | TIMED_OUT) {
        return None;
    }
    let from = super::replica_set::parse_time(str_at(c, "/lastUpdateTime"))?;
    let deadline = int_at(d, "/spec/progressDeadlineSeconds");
    Some(from + deadline - now)
}

/// The status `syncRolloutStatus` writes, at `now` (seconds since the epoch): the counts,
/// `Available`, and the `Progressing` condition's rules.
fn rollout_status(
    d: &Value,
    old: &[Value],
    new_rs: Option<&Value>,
    now: i64,
) -> Map<String, Value> {
    let mut status = calculate_status(d, old, new_rs);
    if !has_progress_deadline(d) {
        util::remove_condition(&mut status, PROGRESSING);
    }
    let current = d
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| str_at(c, "/type") == PROGRESSING))
        .cloned();
    let is_complete = status.get("replicas") == status.get("updatedReplicas")
        && current
            .as_ref()
            .is_some_and(|c| str_at(c, "/reason") == NEW_RS_AVAILABLE);
    let rs_name = new_rs.map(|rs| name(rs).to_owned());
    if has_progress_deadline(d) && !is_complete {
        if complete(d, &status) {
            let msg = match &rs_name {
                Some(n) => format!("ReplicaSet {n:?} has successfully progressed."),
                None => format!("Deployment {:?} has successfully progressed.", name(d)),
            };
            set_condition(
                &mut status,
                new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE, msg),
            );
        } else if progressing(d, &status) {
            let msg = match &rs_name {
                Some(n) => format!("ReplicaSet {n:?} is progressing."),
                None => format!("Deployment {:?} is progressing.", name(d)),
            };
            let mut cond = new_condition(PROGRESSING, "True", "ReplicaSetUpdated", msg);
            if let Some(c) = &current {
                if str_at(c, "/status") == "True" {
                    cond["lastTransitionTime"] =
                        c.get("lastTransitionTime").cloned().unwrap_or(Value::Null);
                }
                util::remove_condition(&mut status, PROGRESSING);
            }
            set_condition(&mut status, cond);
        } else if until_deadline(d, &status, now).is_some_and(|left| left < 0)
            || current
                .as_ref()
                .is_some_and(|c| str_at(c, "/reason") == TIMED_OUT)
        {
            let msg = match &rs_name {
                Some(n) => format!("ReplicaSet {n:?} has timed out progressing."),
                None => format!("Deployment {:?} has timed out progressing.", name(d)),
            };
            set_condition(
                &mut status,
                new_condition(PROGRESSING, "False", TIMED_OUT, msg),
            );
        }
    }
    // ReplicaFailure of a ReplicaSet becomes the Deployment's.
    // The new ReplicaSet's failure first (`getReplicaFailures`).
    let failure = new_rs
        .into_iter()
        .chain(old.iter())
        .filter_map(|rs| {
            rs.pointer("/status/conditions")
                .and_then(Value::as_array)?
                .iter()
                .find(|c| str_at(c, "/type") == "ReplicaFailure")
                .cloned()
        })
        .next();
    match failure {
        Some(f) => {
            let mut cond = new_condition(
                "ReplicaFailure",
                str_at(&f, "/status"),
                str_at(&f, "/reason"),
                str_at(&f, "/message").to_owned(),
            );
            if let Some(t) = f.get("lastTransitionTime") {
                cond["lastTransitionTime"] = t.clone();
                cond["lastUpdateTime"] = t.clone();
            }
            set_condition(&mut status, cond);
        }
        None => util::remove_condition(&mut status, "ReplicaFailure"),
    }
    status
}

/// `syncRolloutStatus`: writes [`rollout_status`] when it changed; the time until the progress
/// deadline falls due, when it will.
async fn sync_rollout_status(
    s: &mut Sync<'_>,
    old: &[Value],
    new_rs: Option<&Value>,
) -> SyncResult<Option<Duration>> {
    let now = super::replica_set::unix_now();
    let status = rollout_status(&s.d, old, new_rs, now);
    let wake = until_deadline(&s.d, &status, now)
        .filter(|left| *left >= 0)
        .map(|left| Duration::from_secs(left as u64 + 1));
    if s.d.get("status").and_then(Value::as_object) == Some(&status) {
        return Ok(wake);
    }
    s.d["status"] = Value::Object(status);
    s.update_status().await?;
    Ok(wake)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(name: &str, created: &str, replicas: i64) -> Value {
        json!({"metadata": {"name": name, "uid": name, "creationTimestamp": created},
            "spec": {"replicas": replicas}})
    }

    #[test]
    fn the_only_active_replica_set_should_be_scaled() {
        let old = [
            rs("a", "2026-01-01T00:00:00Z", 0),
            rs("b", "2026-01-01T00:00:01Z", 2),
        ];
        let found = active_or_latest(None, &old).map(|v| name(&v).to_owned());
        assert_eq!(found.as_deref(), Some("b"));
        let both = [
            rs("a", "2026-01-01T00:00:00Z", 1),
            rs("b", "2026-01-01T00:00:01Z", 2),
        ];
        assert!(active_or_latest(None, &both).is_none());
        let none_active = [
            rs("a", "2026-01-01T00:00:00Z", 0),
            rs("b", "2026-01-01T00:00:01Z", 0),
        ];
        let found = active_or_latest(None, &none_active).map(|v| name(&v).to_owned());
        assert_eq!(found.as_deref(), Some("b"));
    }

    #[test]
    fn status_should_count_replica_sets_and_state_availability() {
        let d = json!({"metadata": {"generation": 2}, "spec": {"replicas": 3,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}});
        let mut new_rs = rs("n", "2026-01-01T00:00:00Z", 3);
        new_rs["status"] = json!({"replicas": 3, "terminatingReplicas": 0});
        let status = calculate_status(&d, &[], Some(&new_rs));
        assert_eq!(status["observedGeneration"], 2);
        assert_eq!(status["replicas"], 3);
        assert_eq!(status["updatedReplicas"], 3);
        assert_eq!(status["unavailableReplicas"], 3);
        assert_eq!(status["terminatingReplicas"], 0);
        assert!(!status.contains_key("availableReplicas"));
        assert_eq!(
            status["conditions"][0]["reason"],
            "MinimumReplicasUnavailable"
        );
        // A ReplicaSet without terminatingReplicas leaves it out.
        let bare = rs("m", "2026-01-01T00:00:00Z", 0);
        let status = calculate_status(&d, &[bare], Some(&new_rs));
        assert!(!status.contains_key("terminatingReplicas"));
    }

    #[test]
    fn a_rollout_without_progress_should_time_out_after_its_deadline() {
        let now = crate::controllers::workloads::replica_set::parse_time("2026-01-01T12:00:00Z")
            .unwrap_or(0);
        let d = |updated: &str| {
            json!({"metadata": {"name": "web", "generation": 1},
                "spec": {"replicas": 1, "progressDeadlineSeconds": 600,
                    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}},
                "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1,
                    "unavailableReplicas": 1, "terminatingReplicas": 0, "conditions": [
                    {"type": "Available", "status": "False", "lastUpdateTime": "2026-01-01T11:00:00Z",
                     "lastTransitionTime": "2026-01-01T11:00:00Z", "reason": "MinimumReplicasUnavailable",
                     "message": "Deployment does not have minimum availability."},
                    {"type": "Progressing", "status": "True", "lastUpdateTime": updated,
                     "lastTransitionTime": "2026-01-01T11:00:00Z", "reason": "ReplicaSetUpdated",
                     "message": "ReplicaSet \"web-1\" is progressing."}]}})
        };
        let mut new_rs = rs("web-1", "2026-01-01T11:00:00Z", 1);
        new_rs["status"] = json!({"replicas": 1, "terminatingReplicas": 0});
        // Within the deadline: nothing changes, the deadline is 300 s away.
        let within = d("2026-01-01T11:55:00Z");
        let status = rollout_status(&within, &[], Some(&new_rs), now);
        assert_eq!(
            within.get("status").and_then(Value::as_object),
            Some(&status)
        );
        assert_eq!(until_deadline(&within, &status, now), Some(300));
        // Past it: Progressing False ProgressDeadlineExceeded, moved last.
        let past = d("2026-01-01T11:49:59Z");
        let status = rollout_status(&past, &[], Some(&new_rs), now);
        let c = &status["conditions"][1];
        assert_eq!(c["reason"], "ProgressDeadlineExceeded");
        assert_eq!(c["status"], "False");
        assert_eq!(
            c["message"],
            "ReplicaSet \"web-1\" has timed out progressing."
        );
        assert_eq!(until_deadline(&past, &status, now), None);
    }
}
