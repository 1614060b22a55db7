//! Field tables: for each message, the number, JSON name and kind of each field, as
//! k8s.io/api's and k8s.io/apimachinery's `generated.proto` number them.
//!
//! Go's encoder writes every field that is not a pointer, zero or not; the JSON form leaves out
//! zero values of such fields (as `omitempty` / `omitzero` do) and keeps those of pointer fields.
//! The kinds say which is which.

/// How a field is encoded, and how it becomes JSON.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// A string; left out when empty.
    Str,
    /// A string behind a pointer: kept when empty.
    OptStr,
    /// An integer; left out when 0.
    Int,
    /// An integer behind a pointer: kept when 0.
    OptInt,
    /// A boolean; left out when false.
    Bool,
    /// A boolean behind a pointer: kept when false.
    OptBool,
    /// `metav1.Time` (seconds, RFC 3339); the zero time is left out.
    Time,
    /// `metav1.MicroTime` (microseconds); the zero time is left out.
    MicroTime,
    /// `resource.Quantity`: its string.
    Quantity,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `metav1.FieldsV1`: JSON bytes, written into the JSON form as they are.
    FieldsV1,
    /// A message.
    Msg(&'static [Field]),
    /// An embedded struct whose fields JSON writes into the enclosing object.
    Inline(&'static [Field]),
    /// `map<string, string>`.
    MapStr,
    /// `map<string, bytes>`: base64 strings in JSON.
    MapBytes,
    /// `map<string, Quantity>`.
    MapQuantity,
    /// `repeated string`.
    RepStr,
    /// `repeated` messages.
    RepMsg(&'static [Field]),
}

impl Kind {
    /// The wire type the kind is sent with.
    pub(crate) fn wire(self) -> u64 {
        match self {
            Kind::Int | Kind::OptInt | Kind::Bool | Kind::OptBool => crate::wire::VARINT,
            _ => crate::wire::LEN,
        }
    }

    /// Whether the field may occur more than once (a repeated field or a map).
    pub(crate) fn repeated(self) -> bool {
        matches!(
            self,
            Kind::MapStr | Kind::MapBytes | Kind::MapQuantity | Kind::RepStr | Kind::RepMsg(_)
        )
    }
}

/// A field of a message: its number, its JSON name (empty for an inlined struct) and kind.
pub(crate) type Field = (u64, &'static str, Kind);

/// `metadata.managedFields`' number in `ObjectMeta`.
pub(crate) const MANAGED_FIELDS: u64 = 17;

const MANAGED_FIELDS_ENTRY: &[Field] = &[
    (1, "manager", Kind::Str),
    (2, "operation", Kind::Str),
    (3, "apiVersion", Kind::Str),
    (4, "time", Kind::Time),
    (6, "fieldsType", Kind::Str),
    (7, "fieldsV1", Kind::FieldsV1),
    (8, "subresource", Kind::Str),
];

const OWNER_REFERENCE: &[Field] = &[
    (1, "kind", Kind::Str),
    (3, "name", Kind::Str),
    (4, "uid", Kind::Str),
    (5, "apiVersion", Kind::Str),
    (6, "controller", Kind::OptBool),
    (7, "blockOwnerDeletion", Kind::OptBool),
];

/// `metav1.ObjectMeta`.
pub(crate) const OBJECT_META: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "generateName", Kind::Str),
    (3, "namespace", Kind::Str),
    (4, "selfLink", Kind::Str),
    (5, "uid", Kind::Str),
    (6, "resourceVersion", Kind::Str),
    (7, "generation", Kind::Int),
    (8, "creationTimestamp", Kind::Time),
    (9, "deletionTimestamp", Kind::Time),
    (10, "deletionGracePeriodSeconds", Kind::OptInt),
    (11, "labels", Kind::MapStr),
    (12, "annotations", Kind::MapStr),
    (13, "ownerReferences", Kind::RepMsg(OWNER_REFERENCE)),
    (14, "finalizers", Kind::RepStr),
    (
        MANAGED_FIELDS,
        "managedFields",
        Kind::RepMsg(MANAGED_FIELDS_ENTRY),
    ),
];

/// `metav1.ListMeta`.
pub(crate) const LIST_META: &[Field] = &[
    (1, "selfLink", Kind::Str),
    (2, "resourceVersion", Kind::Str),
    (3, "continue", Kind::Str),
    (4, "remainingItemCount", Kind::OptInt),
];

const STATUS_CAUSE: &[Field] = &[
    (1, "reason", Kind::Str),
    (2, "message", Kind::Str),
    (3, "field", Kind::Str),
];
const STATUS_DETAILS: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "group", Kind::Str),
    (3, "kind", Kind::Str),
    (4, "causes", Kind::RepMsg(STATUS_CAUSE)),
    (5, "retryAfterSeconds", Kind::Int),
    (6, "uid", Kind::Str),
];
const STATUS: &[Field] = &[
    (1, "metadata", Kind::Msg(LIST_META)),
    (2, "status", Kind::Str),
    (3, "message", Kind::Str),
    (4, "reason", Kind::Str),
    (5, "details", Kind::Msg(STATUS_DETAILS)),
    (6, "code", Kind::Int),
];

const CONFIG_MAP: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "data", Kind::MapStr),
    (3, "binaryData", Kind::MapBytes),
    (4, "immutable", Kind::OptBool),
];

const SECRET: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "data", Kind::MapBytes),
    (3, "type", Kind::Str),
    (4, "stringData", Kind::MapStr),
    (5, "immutable", Kind::OptBool),
];

const NAMESPACE_SPEC: &[Field] = &[(1, "finalizers", Kind::RepStr)];
const NAMESPACE_CONDITION: &[Field] = &[
    (1, "type", Kind::Str),
    (2, "status", Kind::Str),
    (4, "lastTransitionTime", Kind::Time),
    (5, "reason", Kind::Str),
    (6, "message", Kind::Str),
];
const NAMESPACE_STATUS: &[Field] = &[
    (1, "phase", Kind::Str),
    (2, "conditions", Kind::RepMsg(NAMESPACE_CONDITION)),
];
const NAMESPACE: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "spec", Kind::Msg(NAMESPACE_SPEC)),
    (3, "status", Kind::Msg(NAMESPACE_STATUS)),
];

const OBJECT_REFERENCE: &[Field] = &[
    (1, "kind", Kind::Str),
    (2, "namespace", Kind::Str),
    (3, "name", Kind::Str),
    (4, "uid", Kind::Str),
    (5, "apiVersion", Kind::Str),
    (6, "resourceVersion", Kind::Str),
    (7, "fieldPath", Kind::Str),
];
const LOCAL_OBJECT_REFERENCE: &[Field] = &[(1, "name", Kind::Str)];
const SERVICE_ACCOUNT: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "secrets", Kind::RepMsg(OBJECT_REFERENCE)),
    (3, "imagePullSecrets", Kind::RepMsg(LOCAL_OBJECT_REFERENCE)),
    (4, "automountServiceAccountToken", Kind::OptBool),
];

const LEASE_SPEC: &[Field] = &[
    (1, "holderIdentity", Kind::OptStr),
    (2, "leaseDurationSeconds", Kind::OptInt),
    (3, "acquireTime", Kind::MicroTime),
    (4, "renewTime", Kind::MicroTime),
    (5, "leaseTransitions", Kind::OptInt),
    (6, "strategy", Kind::OptStr),
    (7, "preferredHolder", Kind::OptStr),
];
const LEASE: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "spec", Kind::Msg(LEASE_SPEC)),
];

// apps/v1 Deployment and the core/v1 types of its Pod template.

const LABEL_SELECTOR_REQUIREMENT: &[Field] = &[
    (1, "key", Kind::Str),
    (2, "operator", Kind::Str),
    (3, "values", Kind::RepStr),
];
const LABEL_SELECTOR: &[Field] = &[
    (1, "matchLabels", Kind::MapStr),
    (
        2,
        "matchExpressions",
        Kind::RepMsg(LABEL_SELECTOR_REQUIREMENT),
    ),
];

const KEY_TO_PATH: &[Field] = &[
    (1, "key", Kind::Str),
    (2, "path", Kind::Str),
    (3, "mode", Kind::OptInt),
];
const HOST_PATH_VOLUME_SOURCE: &[Field] = &[(1, "path", Kind::Str), (2, "type", Kind::OptStr)];
const EMPTY_DIR_VOLUME_SOURCE: &[Field] =
    &[(1, "medium", Kind::Str), (2, "sizeLimit", Kind::Quantity)];
const SECRET_VOLUME_SOURCE: &[Field] = &[
    (1, "secretName", Kind::Str),
    (2, "items", Kind::RepMsg(KEY_TO_PATH)),
    (3, "defaultMode", Kind::OptInt),
    (4, "optional", Kind::OptBool),
];
const CONFIG_MAP_VOLUME_SOURCE: &[Field] = &[
    (1, "", Kind::Inline(LOCAL_OBJECT_REFERENCE)),
    (2, "items", Kind::RepMsg(KEY_TO_PATH)),
    (3, "defaultMode", Kind::OptInt),
    (4, "optional", Kind::OptBool),
];
const PVC_VOLUME_SOURCE: &[Field] = &[(1, "claimName", Kind::Str), (2, "readOnly", Kind::Bool)];
const VOLUME_SOURCE: &[Field] = &[
    (1, "hostPath", Kind::Msg(HOST_PATH_VOLUME_SOURCE)),
    (2, "emptyDir", Kind::Msg(EMPTY_DIR_VOLUME_SOURCE)),
    (6, "secret", Kind::Msg(SECRET_VOLUME_SOURCE)),
    (10, "persistentVolumeClaim", Kind::Msg(PVC_VOLUME_SOURCE)),
    (19, "configMap", Kind::Msg(CONFIG_MAP_VOLUME_SOURCE)),
];
const VOLUME: &[Field] = &[(1, "name", Kind::Str), (2, "", Kind::Inline(VOLUME_SOURCE))];

const CONTAINER_PORT: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "hostPort", Kind::Int),
    (3, "containerPort", Kind::Int),
    (4, "protocol", Kind::Str),
    (5, "hostIP", Kind::Str),
];
const OBJECT_FIELD_SELECTOR: &[Field] =
    &[(1, "apiVersion", Kind::Str), (2, "fieldPath", Kind::Str)];
const RESOURCE_FIELD_SELECTOR: &[Field] = &[
    (1, "containerName", Kind::Str),
    (2, "resource", Kind::Str),
    (3, "divisor", Kind::Quantity),
];
const KEY_SELECTOR: &[Field] = &[
    (1, "", Kind::Inline(LOCAL_OBJECT_REFERENCE)),
    (2, "key", Kind::Str),
    (3, "optional", Kind::OptBool),
];
const ENV_VAR_SOURCE: &[Field] = &[
    (1, "fieldRef", Kind::Msg(OBJECT_FIELD_SELECTOR)),
    (2, "resourceFieldRef", Kind::Msg(RESOURCE_FIELD_SELECTOR)),
    (3, "configMapKeyRef", Kind::Msg(KEY_SELECTOR)),
    (4, "secretKeyRef", Kind::Msg(KEY_SELECTOR)),
];
const ENV_VAR: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "value", Kind::Str),
    (3, "valueFrom", Kind::Msg(ENV_VAR_SOURCE)),
];
const ENV_SOURCE: &[Field] = &[
    (1, "", Kind::Inline(LOCAL_OBJECT_REFERENCE)),
    (2, "optional", Kind::OptBool),
];
const ENV_FROM_SOURCE: &[Field] = &[
    (1, "prefix", Kind::Str),
    (2, "configMapRef", Kind::Msg(ENV_SOURCE)),
    (3, "secretRef", Kind::Msg(ENV_SOURCE)),
];
const RESOURCE_REQUIREMENTS: &[Field] = &[
    (1, "limits", Kind::MapQuantity),
    (2, "requests", Kind::MapQuantity),
];
const VOLUME_MOUNT: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "readOnly", Kind::Bool),
    (3, "mountPath", Kind::Str),
    (4, "subPath", Kind::Str),
    (5, "mountPropagation", Kind::OptStr),
    (6, "subPathExpr", Kind::Str),
    (7, "recursiveReadOnly", Kind::OptStr),
];
const EXEC_ACTION: &[Field] = &[(1, "command", Kind::RepStr)];
const HTTP_HEADER: &[Field] = &[(1, "name", Kind::Str), (2, "value", Kind::Str)];
const HTTP_GET_ACTION: &[Field] = &[
    (1, "path", Kind::Str),
    (2, "port", Kind::IntOrString),
    (3, "host", Kind::Str),
    (4, "scheme", Kind::Str),
    (5, "httpHeaders", Kind::RepMsg(HTTP_HEADER)),
];
const TCP_SOCKET_ACTION: &[Field] = &[(1, "port", Kind::IntOrString), (2, "host", Kind::Str)];
const GRPC_ACTION: &[Field] = &[(1, "port", Kind::Int), (2, "service", Kind::OptStr)];
const PROBE_HANDLER: &[Field] = &[
    (1, "exec", Kind::Msg(EXEC_ACTION)),
    (2, "httpGet", Kind::Msg(HTTP_GET_ACTION)),
    (3, "tcpSocket", Kind::Msg(TCP_SOCKET_ACTION)),
    (4, "grpc", Kind::Msg(GRPC_ACTION)),
];
const PROBE: &[Field] = &[
    (1, "", Kind::Inline(PROBE_HANDLER)),
    (2, "initialDelaySeconds", Kind::Int),
    (3, "timeoutSeconds", Kind::Int),
    (4, "periodSeconds", Kind::Int),
    (5, "successThreshold", Kind::Int),
    (6, "failureThreshold", Kind::Int),
    (7, "terminationGracePeriodSeconds", Kind::OptInt),
];
const CONTAINER_RESIZE_POLICY: &[Field] = &[
    (1, "resourceName", Kind::Str),
    (2, "restartPolicy", Kind::Str),
];
const CONTAINER: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "image", Kind::Str),
    (3, "command", Kind::RepStr),
    (4, "args", Kind::RepStr),
    (5, "workingDir", Kind::Str),
    (6, "ports", Kind::RepMsg(CONTAINER_PORT)),
    (7, "env", Kind::RepMsg(ENV_VAR)),
    (8, "resources", Kind::Msg(RESOURCE_REQUIREMENTS)),
    (9, "volumeMounts", Kind::RepMsg(VOLUME_MOUNT)),
    (10, "livenessProbe", Kind::Msg(PROBE)),
    (11, "readinessProbe", Kind::Msg(PROBE)),
    (13, "terminationMessagePath", Kind::Str),
    (14, "imagePullPolicy", Kind::Str),
    (16, "stdin", Kind::Bool),
    (17, "stdinOnce", Kind::Bool),
    (18, "tty", Kind::Bool),
    (19, "envFrom", Kind::RepMsg(ENV_FROM_SOURCE)),
    (20, "terminationMessagePolicy", Kind::Str),
    (22, "startupProbe", Kind::Msg(PROBE)),
    (23, "resizePolicy", Kind::RepMsg(CONTAINER_RESIZE_POLICY)),
    (24, "restartPolicy", Kind::OptStr),
];
const TOLERATION: &[Field] = &[
    (1, "key", Kind::Str),
    (2, "operator", Kind::Str),
    (3, "value", Kind::Str),
    (4, "effect", Kind::Str),
    (5, "tolerationSeconds", Kind::OptInt),
];
const POD_SPEC: &[Field] = &[
    (1, "volumes", Kind::RepMsg(VOLUME)),
    (2, "containers", Kind::RepMsg(CONTAINER)),
    (3, "restartPolicy", Kind::Str),
    (4, "terminationGracePeriodSeconds", Kind::OptInt),
    (5, "activeDeadlineSeconds", Kind::OptInt),
    (6, "dnsPolicy", Kind::Str),
    (7, "nodeSelector", Kind::MapStr),
    (8, "serviceAccountName", Kind::Str),
    (9, "serviceAccount", Kind::Str),
    (10, "nodeName", Kind::Str),
    (11, "hostNetwork", Kind::Bool),
    (12, "hostPID", Kind::Bool),
    (13, "hostIPC", Kind::Bool),
    (15, "imagePullSecrets", Kind::RepMsg(LOCAL_OBJECT_REFERENCE)),
    (16, "hostname", Kind::Str),
    (17, "subdomain", Kind::Str),
    (19, "schedulerName", Kind::Str),
    (20, "initContainers", Kind::RepMsg(CONTAINER)),
    (21, "automountServiceAccountToken", Kind::OptBool),
    (22, "tolerations", Kind::RepMsg(TOLERATION)),
    (24, "priorityClassName", Kind::Str),
    (25, "priority", Kind::OptInt),
    (27, "shareProcessNamespace", Kind::OptBool),
    (29, "runtimeClassName", Kind::OptStr),
    (30, "enableServiceLinks", Kind::OptBool),
    (31, "preemptionPolicy", Kind::OptStr),
    (35, "setHostnameAsFQDN", Kind::OptBool),
    (37, "hostUsers", Kind::OptBool),
];
const POD_TEMPLATE_SPEC: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "spec", Kind::Msg(POD_SPEC)),
];

const ROLLING_UPDATE_DEPLOYMENT: &[Field] = &[
    (1, "maxUnavailable", Kind::IntOrString),
    (2, "maxSurge", Kind::IntOrString),
];
const DEPLOYMENT_STRATEGY: &[Field] = &[
    (1, "type", Kind::Str),
    (2, "rollingUpdate", Kind::Msg(ROLLING_UPDATE_DEPLOYMENT)),
];
const DEPLOYMENT_SPEC: &[Field] = &[
    (1, "replicas", Kind::OptInt),
    (2, "selector", Kind::Msg(LABEL_SELECTOR)),
    (3, "template", Kind::Msg(POD_TEMPLATE_SPEC)),
    (4, "strategy", Kind::Msg(DEPLOYMENT_STRATEGY)),
    (5, "minReadySeconds", Kind::Int),
    (6, "revisionHistoryLimit", Kind::OptInt),
    (7, "paused", Kind::Bool),
    (9, "progressDeadlineSeconds", Kind::OptInt),
];
const DEPLOYMENT_CONDITION: &[Field] = &[
    (1, "type", Kind::Str),
    (2, "status", Kind::Str),
    (4, "reason", Kind::Str),
    (5, "message", Kind::Str),
    (6, "lastUpdateTime", Kind::Time),
    (7, "lastTransitionTime", Kind::Time),
];
const DEPLOYMENT_STATUS: &[Field] = &[
    (1, "observedGeneration", Kind::Int),
    (2, "replicas", Kind::Int),
    (3, "updatedReplicas", Kind::Int),
    (4, "availableReplicas", Kind::Int),
    (5, "unavailableReplicas", Kind::Int),
    (6, "conditions", Kind::RepMsg(DEPLOYMENT_CONDITION)),
    (7, "readyReplicas", Kind::Int),
    (8, "collisionCount", Kind::OptInt),
    (9, "terminatingReplicas", Kind::OptInt),
];
const DEPLOYMENT: &[Field] = &[
    (1, "metadata", Kind::Msg(OBJECT_META)),
    (2, "spec", Kind::Msg(DEPLOYMENT_SPEC)),
    (3, "status", Kind::Msg(DEPLOYMENT_STATUS)),
];

/// The field table of one kind.
#[derive(Debug)]
pub struct Schema {
    api_version: &'static str,
    kind: &'static str,
    pub(crate) fields: &'static [Field],
    /// Whether the table covers every field kcr-testenv writes for the kind, so any object of
    /// the kind it stores encodes.
    complete: bool,
}

impl Schema {
    /// The kind's `apiVersion`.
    #[must_use]
    pub fn api_version(&self) -> &'static str {
        self.api_version
    }

    /// The kind's name.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Whether the table holds every field of the kind's API type (so every object of the
    /// kind encodes); `false` for kinds of which only the fields that typed `kubectl create`
    /// commands send are known (`apps/v1` `Deployment`).
    #[must_use]
    pub fn complete(&self) -> bool {
        self.complete
    }
}

const fn schema(
    api_version: &'static str,
    kind: &'static str,
    fields: &'static [Field],
    complete: bool,
) -> Schema {
    Schema {
        api_version,
        kind,
        fields,
        complete,
    }
}

static SCHEMAS: &[Schema] = &[
    schema("v1", "ConfigMap", CONFIG_MAP, true),
    schema("v1", "Secret", SECRET, true),
    schema("v1", "Namespace", NAMESPACE, true),
    schema("v1", "ServiceAccount", SERVICE_ACCOUNT, true),
    schema("coordination.k8s.io/v1", "Lease", LEASE, true),
    schema("apps/v1", "Deployment", DEPLOYMENT, false),
    schema("v1", "Status", STATUS, true),
];

/// The field table of a kind, `None` for a kind this crate cannot encode or decode.
#[must_use]
pub fn schema_for(api_version: &str, kind: &str) -> Option<&'static Schema> {
    SCHEMAS
        .iter()
        .find(|s| s.api_version == api_version && s.kind == kind)
}

/// The field table of the items of a list kind (`ConfigMapList` gives `ConfigMap`'s).
#[must_use]
pub fn item_schema_for(api_version: &str, list_kind: &str) -> Option<&'static Schema> {
    schema_for(api_version, list_kind.strip_suffix("List")?)
}

/// Every kind with a table.
pub fn kinds() -> impl Iterator<Item = &'static Schema> {
    SCHEMAS.iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(fields: &'static [Field], depth: usize) {
        assert!(depth < 16, "tables nest too deeply");
        // In number order (the encoder writes fields in table order, as Go writes them), each
        // number once.
        assert!(
            fields.windows(2).all(|w| w[0].0 < w[1].0),
            "numbers out of order or twice in {fields:?}"
        );
        for (number, name, kind) in fields {
            // The decoder tracks the repeated fields it has read in a 128-bit set.
            assert!(*number > 0 && *number < 128, "{name}");
            match kind {
                Kind::Msg(inner) | Kind::Inline(inner) | Kind::RepMsg(inner) => {
                    check(inner, depth + 1);
                }
                _ => {}
            }
        }
    }

    #[test]
    fn field_numbers_should_be_unique_and_small() {
        for s in kinds() {
            check(s.fields, 0);
        }
        check(LIST_META, 0);
    }

    #[test]
    fn kinds_should_be_found_by_type_and_list_type() {
        assert_eq!(
            schema_for("v1", "ConfigMap").map(Schema::kind),
            Some("ConfigMap")
        );
        assert_eq!(
            item_schema_for("apps/v1", "DeploymentList").map(Schema::kind),
            Some("Deployment")
        );
        assert!(schema_for("batch/v1", "Job").is_none());
        assert!(item_schema_for("v1", "ConfigMap").is_none());
    }
}
