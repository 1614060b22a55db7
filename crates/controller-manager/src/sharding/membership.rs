//! Membership on Leases: each member's own `coordination.k8s.io/v1` Lease, labelled with its
//! group, saying which ranges it holds.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ListParams, ObjectMeta, PostParams};
use kube::{Api, Client};
use parking_lot::Mutex;

use super::options::Config;
use super::protocol::LeaseView;
use super::range::RangeSet;
use crate::Result;

/// The label naming a member Lease's group.
pub const GROUP_LABEL: &str = "kcr.io/shard-group";
/// The annotation holding the ranges a member holds (see [`RangeSet::encode`]).
pub const RANGES_ANNOTATION: &str = "kcr.io/shard-ranges";

/// Reads and writes the group's Leases for one member.
pub(crate) struct Membership {
    api: Api<Lease>,
    name: String,
    group: String,
    identity: String,
    lease_duration_seconds: i32,
    // The Lease last read or written (its resourceVersion makes the next write conditional);
    // held only to copy it in or out, never across an `.await`.
    lease: Mutex<Option<Lease>>,
}

impl Membership {
    pub(crate) fn new(client: Client, config: &Config) -> Self {
        Self {
            api: Api::namespaced(client, &config.namespace),
            name: config.lease_name(),
            group: config.group.clone(),
            identity: config.identity.clone(),
            lease_duration_seconds: i32::try_from(config.timing.lease_duration.as_secs())
                .unwrap_or(i32::MAX),
            lease: Mutex::new(None),
        }
    }

    /// A consistent list (no `resourceVersion`: read from etcd, not the watch cache) of the
    /// group's Leases.
    pub(crate) async fn list(&self) -> Result<Vec<LeaseView>> {
        let params = ListParams::default().labels(&format!("{GROUP_LABEL}={}", self.group));
        let leases = self.api.list(&params).await?;
        Ok(leases.items.iter().filter_map(view).collect())
    }

    /// Writes `held` on this member's Lease (created if missing), conditional on the version
    /// last seen; on a conflict the Lease is read again for the next write.
    pub(crate) async fn write(&self, held: &RangeSet) -> Result<()> {
        let now = MicroTime(Timestamp::now());
        let current = self.lease.lock().clone();
        let Some(mut lease) = current else {
            return match self.api.get(&self.name).await {
                Ok(lease) => {
                    *self.lease.lock() = Some(lease);
                    Box::pin(self.write(held)).await
                }
                Err(kube::Error::Api(status)) if status.code == 404 => {
                    let lease = self.new_lease(held, now);
                    let created = self.api.create(&PostParams::default(), &lease).await?;
                    *self.lease.lock() = Some(created);
                    Ok(())
                }
                Err(e) => Err(e.into()),
            };
        };
        let annotations = lease.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(RANGES_ANNOTATION.to_owned(), held.encode());
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        spec.holder_identity = Some(self.identity.clone());
        spec.lease_duration_seconds = Some(self.lease_duration_seconds);
        spec.renew_time = Some(now);
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(written) => {
                *self.lease.lock() = Some(written);
                Ok(())
            }
            Err(e) => {
                // A conflict or a missing Lease: read it again before the next write.
                *self.lease.lock() = None;
                Err(e.into())
            }
        }
    }

    fn new_lease(&self, held: &RangeSet, now: MicroTime) -> Lease {
        Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                labels: Some(BTreeMap::from([(
                    GROUP_LABEL.to_owned(),
                    self.group.clone(),
                )])),
                annotations: Some(BTreeMap::from([(
                    RANGES_ANNOTATION.to_owned(),
                    held.encode(),
                )])),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(self.identity.clone()),
                lease_duration_seconds: Some(self.lease_duration_seconds),
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                ..LeaseSpec::default()
            }),
        }
    }

    /// Deletes this member's Lease (it holds nothing any more).
    pub(crate) async fn delete(&self) -> Result<()> {
        match self.api.delete(&self.name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// A listed Lease as the protocol reads it: its holder, version, ranges and duration. A Lease
/// without a holder or version is skipped; one whose ranges do not read counts as holding the
/// whole space (the safe reading).
fn view(lease: &Lease) -> Option<LeaseView> {
    let spec = lease.spec.as_ref()?;
    let identity = spec.holder_identity.clone().filter(|h| !h.is_empty())?;
    let version = lease.metadata.resource_version.clone()?;
    let held = lease
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(RANGES_ANNOTATION))
        .map_or_else(|| Some(RangeSet::new()), |text| RangeSet::decode(text))
        .unwrap_or_else(RangeSet::full);
    let seconds = spec.lease_duration_seconds.unwrap_or(0).max(1);
    Some(LeaseView {
        identity,
        version,
        held,
        lease_duration: Duration::from_secs(u64::try_from(seconds).unwrap_or(1)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_with_unreadable_ranges_should_count_as_holding_everything() {
        let lease = Lease {
            metadata: ObjectMeta {
                resource_version: Some("7".into()),
                annotations: Some(BTreeMap::from([(
                    RANGES_ANNOTATION.to_owned(),
                    "junk".to_owned(),
                )])),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some("a".into()),
                lease_duration_seconds: Some(15),
                ..LeaseSpec::default()
            }),
        };
        let view = view(&lease).unwrap_or_else(|| panic!("a view"));
        assert_eq!(view.held, RangeSet::full());
        assert_eq!(view.lease_duration, Duration::from_secs(15));
    }
}
