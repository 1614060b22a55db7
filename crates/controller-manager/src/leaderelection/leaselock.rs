//! A lock on a `coordination.k8s.io/v1` `Lease` (client-go
//! `resourcelock/leaselock.go`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use parking_lot::Mutex;

use super::resourcelock::{LeaderElectionRecord, ResourceLock};
use crate::record::{EventRecorder, EventType};
use crate::{Error, Result};

/// A [`ResourceLock`] stored in a `Lease`.
///
/// The lock keeps the `Lease` it last read or wrote; an update sends it back
/// with that `metadata.resourceVersion`, so the API server answers
/// `409 Conflict` if anyone else wrote in between.
pub struct LeaseLock {
    api: Api<Lease>,
    namespace: String,
    name: String,
    identity: String,
    /// Labels set on the lease this lock creates, and merged into it on
    /// every update (client-go `LeaseLock.Labels`).
    labels: BTreeMap<String, String>,
    // Held only to copy the lease in or out, never across an `.await`.
    lease: Mutex<Option<Lease>>,
    // Held only to clone the recorder out.
    recorder: Mutex<Option<EventRecorder>>,
}

impl std::fmt::Debug for LeaseLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseLock")
            .field("namespace", &self.namespace)
            .field("name", &self.name)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl LeaseLock {
    /// A lock on the lease `namespace/name`, held as `identity`.
    pub fn new(
        client: Client,
        namespace: impl Into<String>,
        name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        let namespace = namespace.into();
        Self {
            api: Api::namespaced(client, &namespace),
            namespace,
            name: name.into(),
            identity: identity.into(),
            labels: BTreeMap::new(),
            lease: Mutex::new(None),
            recorder: Mutex::new(None),
        }
    }

    /// Records `<identity> became leader` / `<identity> stopped leading`
    /// events about the lease with `recorder` (client-go's
    /// `ResourceLockConfig.EventRecorder`).
    #[must_use]
    pub fn event_recorder(self, recorder: EventRecorder) -> Self {
        self.set_event_recorder(recorder);
        self
    }

    /// As [`event_recorder`](Self::event_recorder), on a shared lock.
    pub fn set_event_recorder(&self, recorder: EventRecorder) {
        *self.recorder.lock() = Some(recorder);
    }

    /// Labels for the lease: set when this lock creates it, and written over
    /// the lease's own labels of the same keys on every update (other labels
    /// stay), as client-go's `LeaseLock.Labels`.
    #[must_use]
    pub fn labels<K, V>(mut self, labels: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        self.labels = labels
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self
    }

    /// The labels this lock puts on its lease.
    pub fn lease_labels(&self) -> &BTreeMap<String, String> {
        &self.labels
    }

    /// The lease's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The lease's namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    fn remember(&self, lease: Lease) {
        *self.lease.lock() = Some(lease);
    }
}

fn record_of(spec: Option<&LeaseSpec>) -> LeaderElectionRecord {
    let Some(spec) = spec else {
        return LeaderElectionRecord::default();
    };
    LeaderElectionRecord {
        holder_identity: spec.holder_identity.clone().unwrap_or_default(),
        lease_duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
        acquire_time: spec.acquire_time.clone(),
        renew_time: spec.renew_time.clone(),
        leader_transitions: spec.lease_transitions.unwrap_or_default(),
        strategy: spec.strategy.clone().unwrap_or_default(),
        preferred_holder: spec.preferred_holder.clone().unwrap_or_default(),
    }
}

/// Writes `record` into `spec`: the whole spec is the record's, as client-go's
/// `LeaderElectionRecordToLeaseSpec` (an empty `strategy` or
/// `preferredHolder` is left out).
fn write_record(spec: &mut LeaseSpec, record: &LeaderElectionRecord) {
    let non_empty = |s: &String| (!s.is_empty()).then(|| s.clone());
    spec.holder_identity = non_empty(&record.holder_identity);
    spec.lease_duration_seconds = Some(record.lease_duration_seconds);
    spec.acquire_time = record.acquire_time.clone();
    spec.renew_time = record.renew_time.clone();
    spec.lease_transitions = Some(record.leader_transitions);
    spec.strategy = non_empty(&record.strategy);
    spec.preferred_holder = non_empty(&record.preferred_holder);
}

#[async_trait]
impl ResourceLock for LeaseLock {
    async fn get(&self) -> Result<LeaderElectionRecord> {
        let lease = self.api.get(&self.name).await?;
        let record = record_of(lease.spec.as_ref());
        self.remember(lease);
        Ok(record)
    }

    async fn create(&self, record: &LeaderElectionRecord) -> Result<()> {
        let mut spec = LeaseSpec::default();
        write_record(&mut spec, record);
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                labels: (!self.labels.is_empty()).then(|| self.labels.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        };
        let created = self.api.create(&PostParams::default(), &lease).await?;
        self.remember(created);
        Ok(())
    }

    async fn update(&self, record: &LeaderElectionRecord) -> Result<()> {
        let Some(mut lease) = self.lease.lock().clone() else {
            return Err(Error::LockNotInitialized(self.describe()));
        };
        write_record(lease.spec.get_or_insert_with(LeaseSpec::default), record);
        if !self.labels.is_empty() {
            let labels = lease.metadata.labels.get_or_insert_with(BTreeMap::new);
            for (k, v) in &self.labels {
                labels.insert(k.clone(), v.clone());
            }
        }
        let updated = self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await?;
        self.remember(updated);
        Ok(())
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn record_event(&self, message: &str) {
        let Some(recorder) = self.recorder.lock().clone() else {
            return;
        };
        let lease = self.lease.lock().clone();
        let meta = lease.map(|l| l.metadata).unwrap_or_default();
        let regarding = ObjectReference {
            api_version: Some("coordination.k8s.io/v1".into()),
            kind: Some("Lease".into()),
            namespace: Some(self.namespace.clone()),
            name: Some(self.name.clone()),
            uid: meta.uid,
            resource_version: meta.resource_version,
            ..ObjectReference::default()
        };
        let message = format!("{} {message}", self.identity);
        recorder.event(&regarding, EventType::Normal, "LeaderElection", &message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use k8s_openapi::jiff::Timestamp;

    #[test]
    fn a_record_should_round_trip_through_a_lease_spec_with_the_coordinated_fields() {
        let now = MicroTime(Timestamp::from_second(1_700_000_000).unwrap_or(Timestamp::UNIX_EPOCH));
        let record = LeaderElectionRecord {
            holder_identity: "a".into(),
            lease_duration_seconds: 15,
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            leader_transitions: 3,
            strategy: "OldestEmulationVersion".into(),
            preferred_holder: "b".into(),
        };
        let mut spec = LeaseSpec::default();
        write_record(&mut spec, &record);
        assert_eq!(spec.preferred_holder.as_deref(), Some("b"));
        assert_eq!(spec.strategy.as_deref(), Some("OldestEmulationVersion"));
        assert_eq!(record_of(Some(&spec)), record);

        // A record without them clears them, as client-go writes the whole spec.
        let plain = LeaderElectionRecord {
            strategy: String::new(),
            preferred_holder: String::new(),
            ..record
        };
        write_record(&mut spec, &plain);
        assert_eq!((spec.strategy, spec.preferred_holder), (None, None));
    }

    #[test]
    fn an_empty_holder_should_clear_the_holder_field() {
        let mut spec = LeaseSpec {
            holder_identity: Some("a".into()),
            ..LeaseSpec::default()
        };
        write_record(&mut spec, &LeaderElectionRecord::default());
        assert_eq!(spec.holder_identity, None);
        assert_eq!(record_of(None), LeaderElectionRecord::default());
    }
}
