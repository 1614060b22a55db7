//! `metadata.managedFields` maintained on every write, as kube-apiserver's field manager does:
//! an `Update` entry per manager, API version and subresource for creates, updates and
//! patches (owning what the write changed, taken from the other managers), an `Apply` entry
//! per manager and subresource for server-side apply (owning what the configuration sets),
//! conflicts when an apply changes a field another manager owns, and removal of the fields an
//! applier stops applying when nobody else owns them.

use serde_json::{Map, Value, json};

use super::fieldpath::{Path, Set, fields, path_string};
use super::schema::Schema;
use super::typed;
use crate::meta;
use crate::status::ApiError;

const APPLY: &str = "Apply";
const UPDATE: &str = "Update";

/// One `managedFields` entry.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    time: Option<String>,
    subresource: String,
    set: Set,
}

impl Entry {
    /// Whether this entry is the one of a manager's operation: `Update` entries are per API
    /// version, `Apply` entries are not.
    fn is(&self, manager: &str, operation: &str, api_version: &str, subresource: &str) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource == subresource
            && (operation == APPLY || self.api_version == api_version)
    }

    /// The manager as structured-merge-diff names it in a conflict (a JSON identifier).
    fn identifier(&self) -> String {
        let mut m = Map::new();
        m.insert("manager".into(), Value::String(self.manager.clone()));
        m.insert("operation".into(), Value::String(self.operation.clone()));
        if self.operation == UPDATE {
            m.insert("apiVersion".into(), Value::String(self.api_version.clone()));
        }
        if !self.subresource.is_empty() {
            m.insert(
                "subresource".into(),
                Value::String(self.subresource.clone()),
            );
        }
        Value::Object(m).to_string()
    }

    /// The manager as kube-apiserver prints it in a conflict message.
    fn printed(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s = format!("{s} with subresource {:?}", self.subresource);
        }
        if self.operation == UPDATE {
            s = format!("{s} using {}", self.api_version);
        }
        s
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        // `manager` and `apiVersion` are `omitempty` in Go: an update from a client without a
        // user agent or a field manager has an entry without a manager.
        if !self.manager.is_empty() {
            m.insert("manager".into(), Value::String(self.manager.clone()));
        }
        m.insert("operation".into(), Value::String(self.operation.clone()));
        if !self.api_version.is_empty() {
            m.insert("apiVersion".into(), Value::String(self.api_version.clone()));
        }
        if let Some(t) = &self.time {
            m.insert("time".into(), Value::String(t.clone()));
        }
        m.insert("fieldsType".into(), Value::String("FieldsV1".into()));
        m.insert("fieldsV1".into(), self.set.to_fields_v1());
        if !self.subresource.is_empty() {
            m.insert(
                "subresource".into(),
                Value::String(self.subresource.clone()),
            );
        }
        Value::Object(m)
    }

    fn from_json(v: &Value) -> Option<Entry> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        if s("fieldsType").as_deref() != Some("FieldsV1") {
            return None;
        }
        let operation = s("operation")?;
        if operation != APPLY && operation != UPDATE {
            return None;
        }
        Some(Entry {
            manager: s("manager").unwrap_or_default(),
            operation,
            api_version: s("apiVersion").unwrap_or_default(),
            time: s("time"),
            subresource: s("subresource").unwrap_or_default(),
            set: Set::from_fields_v1(v.get("fieldsV1")?)?,
        })
    }
}

/// The entries of an object; `None` when it has none or they do not decode.
fn decode(obj: &Value) -> Option<Vec<Entry>> {
    let list = obj.pointer("/metadata/managedFields")?.as_array()?;
    let entries: Option<Vec<Entry>> = list.iter().map(Entry::from_json).collect();
    entries.filter(|e| !e.is_empty())
}

/// Whether a write asks to reset the managed fields: its `metadata.managedFields` is an empty
/// list, or a list of one empty entry (`[{}]`). The write then starts from no entries, so
/// that it owns just what it changes.
fn is_reset(obj: &Value) -> bool {
    let Some(list) = obj
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return false;
    };
    match list.as_slice() {
        [] => true,
        [only] => only
            .as_object()
            .is_some_and(|m| m.values().all(|v| v.is_null() || v.as_str() == Some(""))),
        _ => false,
    }
}

/// How many `Update` entries an object keeps; older ones merge into one `ancient-changes`
/// entry per API version (kube-apiserver's `DefaultMaxUpdateManagers`).
const MAX_UPDATE_MANAGERS: usize = 10;
const ANCIENT_CHANGES: &str = "ancient-changes";

/// Merges the oldest `Update` entries into `ancient-changes` entries until at most
/// [`MAX_UPDATE_MANAGERS`] remain.
fn cap_update_managers(entries: &mut Vec<Entry>) {
    let mut updaters: Vec<usize> = (0..entries.len())
        .filter(|i| entries[*i].operation == UPDATE)
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by(|a, b| {
        let (a, b) = (&entries[*a], &entries[*b]);
        seconds(&a.time)
            .cmp(seconds(&b.time))
            .then_with(|| a.identifier().cmp(&b.identifier()))
    });
    let mut length = updaters.len();
    let mut first_of_version: Vec<(String, usize)> = Vec::new();
    let mut gone = Vec::new();
    for i in updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries[i].api_version.clone();
        match first_of_version.iter().find(|(v, _)| *v == version) {
            Some((_, bucket)) => {
                let bucket = *bucket;
                let merged = entries[bucket].set.union(&entries[i].set);
                let time = entries[i].time.clone();
                let b = &mut entries[bucket];
                b.manager = ANCIENT_CHANGES.into();
                b.subresource = String::new();
                b.set = merged;
                b.time = time;
                gone.push(i);
                length -= 1;
            }
            None => first_of_version.push((version, i)),
        }
    }
    gone.sort_unstable();
    for i in gone.into_iter().rev() {
        entries.remove(i);
    }
}

/// Writes the entries in kube-apiserver's order: `Apply` before `Update`, then by time (none
/// first), manager, API version and subresource.
fn encode(obj: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    cap_update_managers(&mut entries);
    entries.sort_by(|a, b| {
        a.operation
            .cmp(&b.operation)
            .then_with(|| seconds(&a.time).cmp(seconds(&b.time)))
            .then_with(|| a.manager.cmp(&b.manager))
            .then_with(|| a.api_version.cmp(&b.api_version))
            .then_with(|| a.subresource.cmp(&b.subresource))
    });
    let Some(meta) = obj.as_object_mut().map(crate::meta::metadata_mut) else {
        return;
    };
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert(
            "managedFields".into(),
            Value::Array(entries.iter().map(Entry::to_json).collect()),
        );
    }
}

/// An RFC 3339 time's sort key (RFC 3339 in UTC sorts as text); no time sorts first.
fn seconds(t: &Option<String>) -> &str {
    t.as_deref().unwrap_or("")
}

fn without_managed_fields(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    v
}

/// The fields nobody owns: type and object identity, and what the server sets.
fn strip_set() -> Set {
    let mut s = Set::default();
    for p in [
        &["apiVersion"][..],
        &["kind"],
        &["metadata"],
        &["metadata", "name"],
        &["metadata", "namespace"],
        &["metadata", "creationTimestamp"],
        &["metadata", "selfLink"],
        &["metadata", "uid"],
        &["metadata", "clusterName"],
        &["metadata", "generation"],
        &["metadata", "managedFields"],
        &["metadata", "resourceVersion"],
    ] {
        s.insert(&fields(p));
    }
    s
}

/// The top-level fields a write endpoint does not change (kube-apiserver's reset fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reset {
    /// The endpoint writes every field.
    Nothing,
    /// The main resource of a kind with a status subresource: `status` is not written.
    Status,
    /// The status subresource: only `status` is written.
    AllButStatus,
    /// The status subresource of a kind whose status strategy takes metadata from the request
    /// too: only `status` and `metadata` are written.
    AllButStatusAndMetadata,
}

/// The field manager of one write: the type's schema, the request's API version and
/// subresource, and the fields the write may not change (its reset fields).
#[derive(Debug, Clone)]
pub(crate) struct FieldManager {
    schema: Schema,
    api_version: String,
    subresource: String,
    reset: Reset,
    /// The object a create compares with: a typed zero object (`{}` for custom resources).
    zero: Value,
}

impl FieldManager {
    /// A field manager for writes of `api_version` through `subresource` (`""` for the main
    /// resource) that do not change the `reset` fields.
    pub(crate) fn new(
        schema: Schema,
        api_version: &str,
        subresource: &str,
        reset: Reset,
        custom: bool,
    ) -> FieldManager {
        let zero = if custom {
            json!({})
        } else {
            schema.zero(&schema.root)
        };
        FieldManager {
            schema,
            api_version: api_version.to_owned(),
            subresource: subresource.to_owned(),
            reset,
            zero,
        }
    }

    /// The object a create compares with, when the kind's Go types give it: what decoding
    /// `{}` into them and encoding it again writes (struct values, `null` times), so that a
    /// create owns none of the zero values it did not set.
    pub(crate) fn with_zero(mut self, zero: Value) -> FieldManager {
        self.zero = zero;
        self
    }

    /// The reset fields of a write that involves these objects.
    fn ignored(&self, objects: &[&Value]) -> Set {
        let mut ignored = Set::default();
        match self.reset {
            Reset::Nothing => {}
            Reset::Status => ignored.insert(&fields(&["status"])),
            Reset::AllButStatus | Reset::AllButStatusAndMetadata => {
                let metadata = self.reset == Reset::AllButStatusAndMetadata;
                for o in objects {
                    for k in o.as_object().into_iter().flat_map(Map::keys) {
                        if k != "status"
                            && k != "apiVersion"
                            && k != "kind"
                            && !(metadata && k == "metadata")
                        {
                            ignored.insert(&fields(&[k]));
                        }
                    }
                }
            }
        }
        ignored
    }

    /// Records a create, update or patch by `manager` in `new`'s `managedFields`: the
    /// entries of `new` if it brings any (the main resource only), else those of `live`;
    /// the fields the write added or changed move to `manager`'s `Update` entry.
    pub(crate) fn update(&self, live: Option<&Value>, new: &mut Value, manager: &str) {
        let incoming = if self.subresource.is_empty() {
            decode(new)
        } else {
            None
        };
        let mut entries = if self.subresource.is_empty() && is_reset(new) {
            Vec::new()
        } else {
            incoming
                .or_else(|| live.and_then(decode))
                .unwrap_or_default()
        };
        let old = live.map_or_else(|| self.zero.clone(), without_managed_fields);
        let cur = without_managed_fields(new);
        let ignored = self.ignored(&[&old, &cur]);
        let c = typed::compare(&self.schema, &self.schema.root, &old, &cur).exclude(&ignored);
        let changed = c.modified.union(&c.added);
        for e in &mut entries {
            e.set = e.set.difference(&changed).difference(&c.removed);
        }
        entries.retain(|e| !e.set.is_empty());
        let mine = changed
            .recursive_difference(&ignored)
            .difference(&strip_set());
        if !mine.is_empty() {
            // kube-apiserver's scale handler maps a Scale's entries back onto the object
            // without their time: an entry of a write through `scale` has none.
            let now = (self.subresource != "scale").then(meta::now_rfc3339);
            match entries
                .iter_mut()
                .find(|e| e.is(manager, UPDATE, &self.api_version, &self.subresource))
            {
                Some(e) => {
                    e.set = e.set.union(&mine);
                    e.time = now;
                }
                None => entries.push(Entry {
                    manager: manager.to_owned(),
                    operation: UPDATE.into(),
                    api_version: self.api_version.clone(),
                    time: now,
                    subresource: self.subresource.clone(),
                    set: mine,
                }),
            }
        }
        encode(new, entries);
    }

    /// Server-side apply of `config` by `manager` to `live` (`None`: the object does not exist
    /// yet). Returns the new object with its `managedFields`, or the conflicts as kube-apiserver
    /// reports them (409) unless `force`.
    pub(crate) fn apply(
        &self,
        live: Option<&Value>,
        config: &Value,
        manager: &str,
        force: bool,
    ) -> Result<Value, ApiError> {
        let root = &self.schema.root;
        let mut entries = live.and_then(decode).unwrap_or_default();
        let old = live.map_or_else(|| json!({}), without_managed_fields);
        let config = without_managed_fields(config);
        let ignored = self.ignored(&[&old, &config]);
        let set = typed::to_field_set(&self.schema, root, &config).recursive_difference(&ignored);
        let mut merged = typed::merge(&self.schema, root, Some(&old), Some(&config));
        let position = entries
            .iter()
            .position(|e| e.is(manager, APPLY, &self.api_version, &self.subresource));
        let last = position.map(|i| entries[i].set.clone());
        let previous_time = position.and_then(|i| entries[i].time.clone());
        if let Some(i) = position {
            entries.remove(i);
        }
        if let Some(last) = last {
            let mut owned = set.clone();
            for e in &entries {
                owned = owned.union(&e.set);
            }
            let gone = last.difference(&owned).difference(&strip_set());
            if !gone.is_empty() {
                merged = typed::remove(&self.schema, root, &merged, &gone);
            }
        }
        let compared = live.map_or_else(|| self.zero.clone(), without_managed_fields);
        let c = typed::compare(&self.schema, root, &compared, &merged).exclude(&ignored);
        let changed = c.modified.union(&c.added);
        let mut conflicts: Vec<(String, String, Path)> = Vec::new();
        for e in &entries {
            for p in e.set.intersection(&changed).paths() {
                conflicts.push((e.identifier(), e.printed(), p));
            }
        }
        if !conflicts.is_empty() && !force {
            return Err(conflict_error(conflicts));
        }
        for e in &mut entries {
            e.set = e.set.difference(&changed).difference(&c.removed);
        }
        entries.retain(|e| !e.set.is_empty());
        let changed_object = live.is_none_or(|l| without_managed_fields(l) != merged);
        let mine = set.difference(&strip_set());
        if !mine.is_empty() {
            entries.push(Entry {
                manager: manager.to_owned(),
                operation: APPLY.into(),
                api_version: self.api_version.clone(),
                time: if changed_object {
                    Some(meta::now_rfc3339())
                } else {
                    previous_time
                },
                subresource: self.subresource.clone(),
                set: mine,
            });
        }
        encode(&mut merged, entries);
        Ok(merged)
    }
}

/// kube-apiserver's 409 for apply conflicts: one cause per field, sorted by manager and path.
fn conflict_error(mut conflicts: Vec<(String, String, Path)>) -> ApiError {
    conflicts.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.2.cmp(&b.2)));
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(_, printed, p)| {
            json!({"reason": "FieldManagerConflict", "message": format!("conflict with {printed}"), "field": path_string(p)})
        })
        .collect();
    let message = if let [(_, printed, p)] = conflicts.as_slice() {
        format!(
            "Apply failed with 1 conflict: conflict with {printed}: {}",
            path_string(p)
        )
    } else {
        let mut lines = Vec::new();
        let mut by_manager: Vec<(&String, &String)> = Vec::new();
        for (id, printed, _) in &conflicts {
            if !by_manager.iter().any(|(i, _)| *i == id) {
                by_manager.push((id, printed));
            }
        }
        by_manager.sort_by(|a, b| a.0.cmp(b.0));
        for (id, printed) in by_manager {
            lines.push(format!("conflicts with {printed}:"));
            for (_, _, p) in conflicts.iter().filter(|c| &c.0 == id) {
                lines.push(format!("- {}", path_string(p)));
            }
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    ApiError::new(409, "Conflict", message).with_details(json!({"causes": causes}))
}

/// kube-apiserver's scale handler around a server-side apply through `/scale`: the entries of
/// `parent` that own its replicas field (`replicas_path`) become entries of the `scale` owning
/// `.spec.replicas` (at `autoscaling/v1`), `config` is applied to the Scale by `manager`, and
/// the Scale's entries map back onto the parent's: a manager that lost the replicas no longer
/// owns them in its parent entry, a manager new to them gets an entry of `parent_api_version`
/// and subresource `scale` (without a time). Returns the applied Scale and the parent's new
/// `managedFields`.
pub(crate) fn apply_through_scale(
    parent: &Value,
    replicas_path: &[&str],
    parent_api_version: &str,
    scale: &Value,
    config: &Value,
    manager: &str,
    force: bool,
) -> Result<(Value, Value), ApiError> {
    let path = fields(replicas_path);
    let scale_path = fields(&["spec", "replicas"]);
    let mut only_path = Set::default();
    only_path.insert(&path);
    let mut only_scale_path = Set::default();
    only_scale_path.insert(&scale_path);
    let parent_entries = decode(parent).unwrap_or_default();
    let scale_entries: Vec<Entry> = parent_entries
        .iter()
        .filter(|e| e.set.has(&path))
        .map(|e| Entry {
            api_version: "autoscaling/v1".into(),
            set: only_scale_path.clone(),
            ..e.clone()
        })
        .collect();
    let mut live = scale.clone();
    encode(&mut live, scale_entries);
    let schema = Schema::custom(Some(&json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
            "status": {"type": "object", "properties": {
                "replicas": {"type": "integer"}, "selector": {"type": "string"}}},
        }
    })));
    let fm = FieldManager::new(schema, "autoscaling/v1", "scale", Reset::Nothing, true);
    let applied = fm.apply(Some(&live), config, manager, force)?;
    let mut after: Vec<Entry> = decode(&applied).unwrap_or_default();
    let mut entries = Vec::new();
    for e in parent_entries {
        if !e.set.has(&path) {
            entries.push(e);
            continue;
        }
        match after.iter().position(|s| s.identifier() == e.identifier()) {
            Some(i) => {
                after.remove(i);
                entries.push(e);
            }
            None => {
                let set = e.set.difference(&only_path);
                if !set.is_empty() {
                    entries.push(Entry { set, ..e });
                }
            }
        }
    }
    for s in after {
        if s.set.has(&scale_path) {
            entries.push(Entry {
                api_version: parent_api_version.to_owned(),
                time: None,
                set: only_path.clone(),
                ..s
            });
        }
    }
    let mut holder = json!({"metadata": {}});
    encode(&mut holder, entries);
    let managed = holder
        .pointer("/metadata/managedFields")
        .cloned()
        .unwrap_or_else(|| json!([]));
    let mut applied = applied;
    if let Some(m) = applied.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    Ok((applied, managed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm() -> FieldManager {
        FieldManager::new(
            Schema::builtin("", "v1", "ConfigMap"),
            "v1",
            "",
            Reset::Nothing,
            false,
        )
    }

    fn fields_of(obj: &Value) -> Vec<(String, String, Value)> {
        obj["metadata"]["managedFields"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| {
                        (
                            e["manager"].as_str().unwrap_or_default().to_owned(),
                            e["operation"].as_str().unwrap_or_default().to_owned(),
                            e["fieldsV1"].clone(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn an_empty_entry_or_list_should_reset_the_managed_fields() {
        let fm = cm();
        let mut live =
            json!({"metadata": {"name": "c", "finalizers": ["x/y"]}, "data": {"a": "1"}});
        fm.update(None, &mut live, "creator");
        assert_eq!(fields_of(&live).len(), 1);
        // Removing a finalizer with `[{}]`: nobody owns anything afterwards.
        let mut next =
            json!({"metadata": {"name": "c", "managedFields": [{}]}, "data": {"a": "1"}});
        fm.update(Some(&live), &mut next, "cleaner");
        assert!(fields_of(&next).is_empty());
        // `[]` resets too; the write then owns what it changed.
        let mut next = json!({"metadata": {"name": "c", "managedFields": []}, "data": {"a": "2"}});
        fm.update(Some(&live), &mut next, "cleaner");
        assert_eq!(
            fields_of(&next),
            vec![(
                "cleaner".into(),
                "Update".into(),
                json!({"f:data": {"f:a": {}}})
            )]
        );
        // Without a reset the live entries stay.
        let mut next = json!({"metadata": {"name": "c"}, "data": {"a": "1"}});
        fm.update(Some(&live), &mut next, "cleaner");
        assert_eq!(fields_of(&next).len(), 1);
    }

    #[test]
    fn the_oldest_of_more_than_ten_updaters_should_merge_into_ancient_changes() {
        let fm = cm();
        let mut obj = json!({"metadata": {"name": "c"}, "data": {}});
        for i in 0..12 {
            let mut next = obj.clone();
            next["data"][format!("k{i}")] = json!("v");
            fm.update(Some(&obj), &mut next, &format!("m{i:02}"));
            obj = next;
        }
        let managers: Vec<String> = fields_of(&obj).into_iter().map(|e| e.0).collect();
        assert_eq!(managers.len(), 10);
        assert!(managers.contains(&"ancient-changes".to_string()));
        assert!(!managers.contains(&"m00".to_string()) && !managers.contains(&"m02".to_string()));
        let ancient = fields_of(&obj)
            .into_iter()
            .find(|e| e.0 == "ancient-changes")
            .unwrap();
        assert_eq!(
            ancient.2,
            json!({"f:data": {"f:k0": {}, "f:k1": {}, "f:k2": {}}})
        );
    }

    #[test]
    fn a_webhook_configurations_webhooks_should_be_owned_one_by_one_by_name() {
        // admissionregistration was untyped before the structure table was generated for
        // every served kind: `webhooks` was one atomic value.
        let fm = FieldManager::new(
            Schema::builtin(
                "admissionregistration.k8s.io",
                "v1",
                "ValidatingWebhookConfiguration",
            ),
            "admissionregistration.k8s.io/v1",
            "",
            Reset::Nothing,
            false,
        );
        let hook = |name: &str| json!({"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"], "clientConfig": {"url": "https://example.com"}});
        let mut obj = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "w"}, "webhooks": [hook("a.example.com")]});
        fm.update(None, &mut obj, "first");
        let mut next = obj.clone();
        next["webhooks"]
            .as_array_mut()
            .unwrap()
            .push(hook("b.example.com"));
        fm.update(Some(&obj), &mut next, "second");
        let entries = fields_of(&next);
        let second = entries.iter().find(|e| e.0 == "second").unwrap();
        let owned = second.2["f:webhooks"].as_object().unwrap();
        assert_eq!(
            owned.keys().collect::<Vec<_>>(),
            ["k:{\"name\":\"b.example.com\"}"],
            "{}",
            second.2
        );
        assert!(owned.values().next().unwrap()["f:admissionReviewVersions"].is_object());
    }

    #[test]
    fn an_entry_without_a_manager_should_leave_the_field_out() {
        let mut new = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}});
        cm().update(None, &mut new, "");
        let entry = &new["metadata"]["managedFields"][0];
        assert_eq!(entry["operation"], "Update", "{entry}");
        assert!(entry.get("manager").is_none(), "{entry}");
    }

    #[test]
    fn a_create_should_own_every_field_it_sets() {
        let mut new = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"k": "v"}});
        cm().update(None, &mut new, "writer");
        assert_eq!(
            fields_of(&new),
            [(
                "writer".into(),
                "Update".into(),
                json!({"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}})
            )]
        );
    }

    #[test]
    fn an_update_should_take_the_fields_it_changes_from_an_applier() {
        let fm = cm();
        let applied = fm
            .apply(
                None,
                &json!({"metadata": {"name": "c"}, "data": {"k": "v"}}),
                "mgr-a",
                false,
            )
            .unwrap();
        let mut edited = applied.clone();
        edited["data"]["k"] = json!("edited");
        fm.update(Some(&applied), &mut edited, "editor");
        assert_eq!(
            fields_of(&edited),
            [(
                "editor".into(),
                "Update".into(),
                json!({"f:data": {"f:k": {}}})
            )]
        );
        let err = fm
            .apply(
                Some(&edited),
                &json!({"metadata": {"name": "c"}, "data": {"k": "v"}}),
                "mgr-a",
                false,
            )
            .unwrap_err();
        assert_eq!(
            err.message,
            "Apply failed with 1 conflict: conflict with \"editor\" using v1: .data.k"
        );
    }

    #[test]
    fn conflicts_with_several_fields_should_be_listed_per_manager() {
        let fm = cm();
        let a = fm
            .apply(None, &json!({"metadata": {"name": "c", "labels": {"l": "1"}}, "data": {"k": "v", "j": "1"}}), "mgr-a", false)
            .unwrap();
        let err = fm
            .apply(Some(&a), &json!({"metadata": {"name": "c", "labels": {"l": "2"}}, "data": {"k": "o", "j": "2"}}), "mgr-b", false)
            .unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(
            err.message,
            "Apply failed with 3 conflicts: conflicts with \"mgr-a\":\n- .data.j\n- .data.k\n- .metadata.labels.l"
        );
        let forced = fm
            .apply(
                Some(&a),
                &json!({"metadata": {"name": "c"}, "data": {"k": "o"}}),
                "mgr-b",
                true,
            )
            .unwrap();
        assert_eq!(
            fields_of(&forced),
            [
                (
                    "mgr-a".into(),
                    "Apply".into(),
                    json!({"f:data": {"f:j": {}}, "f:metadata": {"f:labels": {"f:l": {}}}})
                ),
                (
                    "mgr-b".into(),
                    "Apply".into(),
                    json!({"f:data": {"f:k": {}}})
                )
            ]
        );
    }

    #[test]
    fn an_applier_should_remove_what_it_stops_applying_unless_another_owns_it() {
        let fm = cm();
        let a = fm
            .apply(
                None,
                &json!({"metadata": {"name": "c"}, "data": {"k": "v", "s": "shared", "gone": "1"}}),
                "mgr-a",
                false,
            )
            .unwrap();
        let b = fm
            .apply(
                Some(&a),
                &json!({"metadata": {"name": "c"}, "data": {"s": "shared"}}),
                "mgr-b",
                false,
            )
            .unwrap();
        assert!(b["metadata"]["managedFields"][0].get("time").is_none());
        let a2 = fm
            .apply(
                Some(&b),
                &json!({"metadata": {"name": "c"}, "data": {"k": "v"}}),
                "mgr-a",
                false,
            )
            .unwrap();
        assert_eq!(a2["data"], json!({"k": "v", "s": "shared"}));
    }
}
