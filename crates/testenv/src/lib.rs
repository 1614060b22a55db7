//! An embedded Kubernetes API server for tests, examples and demos.
//!
//! [`TestEnv::start`] runs a real HTTP API server on a free loopback port, in-process;
//! [`TestEnv::client`] is a `kube::Client` for it and [`TestEnv::kubeconfig_path`] a kubeconfig
//! that `kubectl` accepts. The `kcr-apiserver` binary runs the same server standalone.
//! Nothing is mocked: resource versions, watch streams, bookmarks, `410 Gone` and conflicts
//! behave as they do on kube-apiserver, so controllers tested here behave the same on a cluster.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let env = kcr_testenv::TestEnv::start().await?;
//! let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! let created = api.create(&PostParams::default(), &cm).await?;
//! assert!(created.metadata.resource_version.is_some());
//!
//! // Two writers start from the same version: the second one gets 409 Conflict.
//! let mut first = created.clone();
//! first.data = Some([("writer".to_string(), "first".to_string())].into());
//! api.replace("settings", &PostParams::default(), &first).await?;
//! let mut second = created.clone();
//! second.data = Some([("writer".to_string(), "second".to_string())].into());
//! let err = api.replace("settings", &PostParams::default(), &second).await.unwrap_err();
//! assert!(matches!(err, kube::Error::Api(s) if s.code == 409));
//! # Ok(())
//! # }
//! ```
//!
//! # What it serves
//!
//! - **Discovery**: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>`,
//!   `/apis/<group>/<version>`, aggregated discovery (`apidiscovery.k8s.io/v2`) when asked for,
//!   minimal `/openapi/v2` and `/openapi/v3`, `/healthz`, `/livez`, `/readyz`.
//! - **Built-in resources**: every resource kube-apiserver v1.36.2 serves, as its discovery
//!   lists it (`data/api-resources-v1.36.2.txt`: 20 API groups, each resource with
//!   its kind, scope, verbs and subresources; a verb a resource does not serve gets `405`),
//!   stored with the conventions below, `status` subresources included; short names and
//!   categories as kube-apiserver's discovery shows them. The create-only resources are answered
//!   without storage (the reviews, see *Reviews*); the other create-only resources, and the
//!   subresources not listed under *Subresources*, are listed in discovery but answer `404`
//!   until kcr-testenv emulates them. core/v1 and
//!   events.k8s.io/v1 events are one resource, each version reading the other's with its fields
//!   converted. `apiextensions.k8s.io/v1` `customresourcedefinitions`:
//!   Creating a CRD serves its resource (namespaced or
//!   cluster-scoped, every served version, `status` and `scale` when declared; another
//!   subresource of a custom resource is `404` for the object, as on kube-apiserver); the create
//!   answers with the CRD as stored (`conditions: null`), then apiextensions-apiserver's
//!   controllers accept and establish it (a second write, by `kube-apiserver` through
//!   `status`); deleting it stops serving it and deletes its objects.
//! - **Validation** (as kube-apiserver v1.36, `422 Invalid` with the recorded causes): object
//!   names, label keys and values, annotation keys and their 256 KiB total; ConfigMap and Secret
//!   keys, `binaryData` duplicates, `immutable`, Secret types' required keys and immutable
//!   `type`; Service ports, protocols, types and session affinity, cluster IPs immutable; Pod
//!   containers (names, images, ports, duplicates, pull and termination message policies),
//!   restart and DNS policies and volumes (one source each); workload templates that always
//!   restart, no rolling update with `Recreate`; custom resources against their CRD's
//!   schema and its `x-kubernetes-validations` rules, evaluated with CEL on create, update and
//!   `status` writes (transition rules with `oldSelf`, `optionalOldSelf`, `messageExpression`,
//!   `reason`, `fieldPath`, ratcheting of unchanged values; a rule that does not compile refuses
//!   the CRD);
//!   Deployment selectors (required, matching the template, immutable) and templates; Lease
//!   durations; events.k8s.io Events; CronJobs (the cron parser's schedule errors, no `TZ=`
//!   in a schedule, IANA time zones, the job template, 52-character names);
//!   HorizontalPodAutoscalers v1/v2 (replica bounds, target, metrics, behavior); Ingresses,
//!   NetworkPolicies, IngressClasses; PodDisruptionBudgets; PersistentVolumes (one source,
//!   immutable); StorageClasses; ResourceQuota `hard` limits; Namespace `spec.finalizers`; CRD names, groups (a dot required, `*.k8s.io` and
//!   `*.kubernetes.io` only with `api-approved.kubernetes.io` set to a URL or to a reason
//!   starting with `unapproved`, stated in the `KubernetesAPIApprovalPolicyConformant`
//!   condition), scale paths, and schemas: structural (a `type` for every specified field,
//!   no `additionalProperties` at the root, `metadata` restricting only `name` and
//!   `generateName`, value validations naming no type, default, description or extension and
//!   no field the structure lacks, the `x-kubernetes-int-or-string` and embedded-resource
//!   rules) and within kube-apiserver's OpenAPI subset (known types; no `$ref`, `id`,
//!   `definitions`, `patternProperties`, `dependencies`, `additionalItems`, `uniqueItems`;
//!   `properties` and `additionalProperties` exclusive; no defaults in top-level metadata;
//!   `x-kubernetes-preserve-unknown-fields` only `true`; list and map types that fit the
//!   schema, map keys required or defaulted). Not checked: defaults against their schema
//!   (`ValidateDefaults`), the type checking of `x-kubernetes-validations` rules beyond
//!   syntax, variables, the fields of `self` and simple operand and result types (no cost
//!   limits), the fields other than `type` allowed at the root with the
//!   status subresource, version and name formats (DNS-1035 labels), printer columns,
//!   selectable fields and conversion webhooks, and the approval kept unchecked while
//!   unchanged on update. A
//!   `pattern` is compiled with the `regex` crate, so an invalid one is refused with that
//!   crate's error text rather than Go's; kube-apiserver walks `properties` in random order,
//!   kcr-testenv in sorted order. Built-in objects are decoded
//!   through their k8s-openapi types: a value of the wrong type is a `400`; unknown fields are
//!   dropped with a `Warning` header, dropped silently under `fieldValidation=Ignore`, refused
//!   with `400` under `fieldValidation=Strict`. Write options are validated as
//!   `ValidateCreateOptions`, `ValidateUpdateOptions`, `ValidatePatchOptions` and
//!   `ValidateDeleteOptions` do, every error of one request in one `422` (`dryRun` only `All`,
//!   `fieldValidation`, `fieldManager` at most 128 bytes of printable characters, `force` only
//!   for apply, which requires a `fieldManager`, `propagationPolicy` values and not with
//!   `orphanDependents`); DeleteOptions come from the body when there is one, else from the
//!   query, as kube-apiserver reads them.
//!   Custom resources are pruned, defaulted and validated by their version's `openAPIV3Schema`.
//! - **Update validation** (each kind's `ValidateXUpdate` of v1.36, after the new state is
//!   validated where kube-apiserver does so first): Pods may change only their containers'
//!   images, a lower `activeDeadlineSeconds`, added tolerations, removed scheduling gates and a
//!   negative grace period to 1; anything else is `spec: Forbidden: pod updates may not change
//!   fields other than ...` followed by the unified diff of the two internal specs as Go encodes
//!   them (`registry/core/pod.rs`, `wire::go_internal`, `wire::difflib`; nested types without a
//!   table of their Go field order are written with sorted, capitalised names, so a diff inside
//!   probes, volumes or affinities may differ in its line order from kube-apiserver's);
//!   StatefulSets only `replicas`, `ordinals`, `template`, `updateStrategy`,
//!   `revisionHistoryLimit`, `persistentVolumeClaimRetentionPolicy`, `minReadySeconds`;
//!   Deployment, ReplicaSet and DaemonSet selectors are immutable (a DaemonSet counts its
//!   template generations in `deprecated.daemonset.template.generation`); Jobs keep
//!   `completions` (Indexed Jobs scale it with `parallelism`), `selector`, `completionMode` and
//!   their pod template (a suspended Job that never started may change its scheduling
//!   directives), with the generated selector checked; Services keep their cluster IPs, refuse
//!   duplicate port names and `port`/`protocol` pairs, a `clusterIPs` not starting with
//!   `clusterIP` and dual-stack policies (a single-stack cluster), and drop the node ports and
//!   external traffic policy a new type no longer needs; PersistentVolumeClaims keep their spec
//!   (but for a volume name or storage class not set yet, and a bound claim's storage request),
//!   refused with the internal diff; ephemeral containers are neither removed nor changed
//!   (with their diff); CRDs keep `group` and
//!   `names.plural`, and `scope` and `names.kind` once established; `immutable: true`
//!   ConfigMaps and Secrets; metadata as `ValidateObjectMetaUpdate`.
//! - **Decode errors** as kube-apiserver's decoder and handlers word them: a body of a version
//!   its scheme registers but another than the URL's (`the API version in the data (...) does not
//!   match ...`), of a version it does not register (`no kind "X" is registered for version
//!   ...`), of another kind (`converting (v1.X) to (core.Y): unknown conversion`), without a
//!   name on `PUT`; an apply configuration of another group, version or kind (`invalid object
//!   type`); protobuf without its prefix or with an illegal wire type (`400`); merge and
//!   strategic merge patches that are not objects; `415` for a body (DeleteOptions too) of a
//!   media type kube-apiserver does not decode; `406` listing an item's or a collection's
//!   representations, or for an unknown `as=` conversion.
//! - **Defaulting** as kube-apiserver v1.36: what its decoder defaults (and the writer owns in
//!   `managedFields`): workloads (Deployment strategy, revision history, progress deadline,
//!   replicas; StatefulSet and DaemonSet strategies), pod specs (restart and DNS policy,
//!   scheduler, grace period, security context, container pull policy by image tag,
//!   termination message, resources, port protocols, probes, volume modes), Pods (service
//!   links, requests from limits), Services (type, session affinity, traffic policies, target
//!   ports), Secrets (`type` `Opaque`, `stringData` merged into `data`); and what the
//!   strategies, admission plugins and allocators set after the field manager (owned by no
//!   manager): empty workload statuses, a Pod's service account, image pull secrets, token
//!   volume, default tolerations, priority, LimitRange defaults, `Pending` phase and QoS class,
//!   a claim's protection finalizer, a Service's cluster IPs
//!   (10.96.0.0/12, IPv4 single stack) and node ports, kept by updates that leave them out.
//! - **Start-up objects**, as a new kube-apiserver creates them: the namespaces `default`,
//!   `kube-system`, `kube-public` and `kube-node-lease`; the `default/kubernetes` Service (port
//!   443 to this server's port) with its Endpoints and EndpointSlice; the RBAC bootstrap policy
//!   (`cluster-admin`, `admin`, `edit` and `view` with their aggregated rules, the `system:*`
//!   ClusterRoles of the control plane's components and their ClusterRoleBindings); the
//!   PriorityClasses `system-node-critical` and `system-cluster-critical`. With
//!   [`TestEnvBuilder::namespace_controllers`] (or [`TestEnvBuilder::realistic`]) every
//!   namespace also gets the `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap that
//!   kube-controller-manager would create.
//! - **Namespaces**: a new one gets the `kubernetes` finalizer and the
//!   `kubernetes.io/metadata.name` label. Deleting one makes it `Terminating`; creates in it get
//!   `403`. kcr-testenv's own namespace finalizer (kube-controller-manager's namespace
//!   controller on a cluster; [`TestEnvBuilder::finalize_namespaces`], on by default) deletes
//!   its objects, waits for their finalizers while stating what remains in the conditions
//!   kube-controller-manager writes through `status` (`NamespaceDeletionDiscoveryFailure`,
//!   `...GroupVersionParsingFailure`, `...ContentFailure` `False`; `NamespaceContentRemaining`
//!   and `NamespaceFinalizersRemaining` with their counts), then removes its `kubernetes`
//!   finalizer and so the namespace (another `spec.finalizers` entry keeps it `Terminating`);
//!   with it off (`kcr-apiserver --namespace-controller=false`) the namespace stays
//!   `Terminating` until `PUT .../finalize` empties `spec.finalizers`.
//! - **Verbs**, following the API conventions: `create` (`generateName`, `uid`,
//!   `creationTimestamp`, `resourceVersion`, `generation` = 1, `409 AlreadyExists`, `404` for a
//!   missing namespace), `get`, `list`, `watch`, `update` (a stale `resourceVersion` gets
//!   `409 Conflict`; custom resources require one; `generation` increments when anything but
//!   metadata and status changes; a no-op update keeps the version; with a `status`
//!   subresource the main resource ignores `status` and `/status` ignores everything else),
//!   `patch` (JSON merge patch, JSON patch, strategic merge patch with the built-in types'
//!   merge keys and `$patch`/`$retainKeys`/`$setElementOrder`/`$deleteFromPrimitiveList`, `415`
//!   for custom resources as on kube-apiserver; server-side apply with YAML or JSON bodies),
//!   `metadata.managedFields` on every write as kube-apiserver keeps them (`Update` entries per
//!   manager, API version and subresource; `Apply` entries; field ownership by the types' list
//!   and map semantics, from a table of the built-in types or the CRD's `openAPIV3Schema`;
//!   apply conflicts (`409`), `force`, removal of fields an applier stops applying), `delete`
//!   (finalizers set `deletionTimestamp` and keep the object until the last one is removed;
//!   `preconditions`; a `Status` `Success` answer except for Pods, Namespaces and Services, which answer
//!   with the object; `propagationPolicy=Foreground`/`Orphan` add the
//!   `foregroundDeletion`/`orphan` finalizer, which stays unless the garbage collector runs
//!   ([`TestEnvBuilder::garbage_collector`], in [`TestEnvBuilder::realistic`])),
//!   `deletecollection`; `dryRun=All` is honoured. A `PUT` whose `metadata.uid` is not the
//!   object's gets `409` (a failed precondition); a patch that changes `uid`,
//!   `deletionTimestamp` or `deletionGracePeriodSeconds` gets `422` "field is immutable" (listed
//!   twice, as kube-apiserver validates metadata twice), one that names another namespace or
//!   name `400`; `creationTimestamp` and `generation` are reset silently. Only workloads, Pods,
//!   CRDs and custom resources carry
//!   `generation`. Errors are `metav1.Status` bodies.
//! - **List**: `labelSelector` (full syntax, key and value errors as `labels.NewRequirement`
//!   words them), `fieldSelector` as `fields.ParseSelector` parses it (escapes, sorted terms)
//!   with each kind's field label conversion (`registry::field_labels`): the labels
//!   kube-apiserver's conversion for the kind accepts (Pods' `spec.nodeName`,
//!   `spec.hostNetwork`, `status.phase` ...; Nodes' `spec.unschedulable`; Secrets' `type`;
//!   Services' `spec.clusterIP`, `spec.type`; Events'; Jobs' `status.successful`; CSRs';
//!   ResourceSlices'; a CRD's `selectableFields`; no `metadata.namespace` for Nodes, Namespaces
//!   and cluster-scoped custom resources), its message for the others (`field label not
//!   supported: x`, or `"x" is not a known field selector: only "metadata.name",
//!   "metadata.namespace"` for kinds without a conversion of their own), and Go's zero value
//!   for a field the object leaves out (`spec.unschedulable=false` matches a new Node);
//!   `limit` + `continue` (a token older than
//!   the history gets `410 Expired`), `resourceVersion` + `resourceVersionMatch`, validated as
//!   kube-apiserver does (`422` on `ListOptions`). The history is the watch cache's window: exact
//!   lists and continue tokens in it are served after a storage compaction
//!   ([`Faults::compact_storage`]); `resourceVersion=0` ignores `limit`; a version from the future
//!   waits up to 3 s, then `504` "Too large resource version" (see the `watch_cache` module).
//! - **Sharded list and watch** (KEP-5866, with [`TestEnvBuilder::sharded_list_and_watch`] or
//!   `kcr-apiserver --feature-gates=ShardedListAndWatch=true`; off by default, as on
//!   kube-apiserver v1.36, and then ignored): `shardSelector` (`shardRange(object.metadata.uid,
//!   '0x<16 hex>', '0x<16 hex>')`, or `object.metadata.namespace`, ranges joined by `||`) keeps
//!   the objects whose field's 64-bit FNV-1a hash is in a range (`""` for cluster-scoped
//!   objects' namespace) in lists, watches and deletecollection, with the other selectors;
//!   lists of built-in kinds echo its canonical form in `metadata.shardInfo` (custom resource
//!   lists do not); an invalid one is a `500` `invalid shard selector: ...`, as kube-apiserver
//!   answers it.
//! - **Watch**: from a `resourceVersion` (`""`/`"0"` start with `ADDED` for the current state;
//!   older than the history, which starts when the server starts: an `ERROR` event with
//!   `410 Expired`), `allowWatchBookmarks` (a `BOOKMARK` every
//!   [`TestEnvBuilder::bookmark_interval`], a minute by default, and 2 s before the watch's
//!   timeout), `timeoutSeconds`,
//!   `sendInitialEvents=true` (the state as `ADDED`, then, when bookmarks are allowed, a
//!   `BOOKMARK` annotated `k8s.io/initial-events-end: "true"`), selectors (an object that stops matching is sent as
//!   `DELETED`, one that starts matching as `ADDED`); a watch-list from the future ends with an
//!   `ERROR` after 3 s, a plain watch from the future waits for it silently, as kube-apiserver's.
//!   Events are chunked JSON lines. Each watch
//!   has its own task and buffer, so a slow client never holds up the others.
//! - **Compression**: for a client that sends `Accept-Encoding: gzip`, a response larger than
//!   128 KiB and the stream of a streaming list are gzip-compressed (level 1), as
//!   kube-apiserver (v1.37) compresses them; plain watches never are.
//! - **Auth**: with [`TestEnvBuilder::token`], a request with another token gets `401`, one
//!   without credentials is `system:anonymous`, `403 Forbidden` as RBAC words it (except
//!   `/version` and the health checks). Plain HTTP on loopback by default; [`TestEnvBuilder::tls`] serves HTTPS with a
//!   freshly generated CA and serving certificate for `127.0.0.1`/`localhost`, trusted by
//!   [`TestEnv::client`] and written into the kubeconfig (`certificate-authority-data`).
//!   kubectl (client-go) sends a token only over TLS, so give it a token only with TLS on.
//!   The admin token (or no token, when none is configured) is a member of `system:masters`;
//!   tokens of [`TestEnvBuilder::user_token`] and [`TestEnv::client_for_user`] are their users,
//!   and tokens issued through `serviceaccounts/<name>/token` (TokenRequest; see
//!   [`TestEnv::service_account_client`]) are `system:serviceaccount:<namespace>:<name>` in
//!   `system:serviceaccounts`, `system:serviceaccounts:<namespace>` and `system:authenticated`,
//!   while the ServiceAccount exists.
//! - **RBAC** (off by default, [`TestEnvBuilder::rbac`]): every request is authorized as
//!   kube-apiserver's RBAC authorizer does, from the stored `rbac.authorization.k8s.io/v1`
//!   Roles, ClusterRoles (aggregated ones too), RoleBindings and ClusterRoleBindings: verbs and
//!   `*`, API groups, resources with subresources (`pods/log`, `*/scale`), `resourceNames`,
//!   `nonResourceURLs`, subjects by user, group or ServiceAccount. A denied request gets
//!   kube-apiserver's `403 Forbidden` (`... is forbidden: User "..." cannot VERB resource "..."
//!   in API group "..." in the namespace "..."`, with a binding to a missing role named), so an
//!   operator's RBAC manifests can be tested by running it under its ServiceAccount. Roles and
//!   bindings written by anyone but `system:masters` may grant only what the writer holds
//!   (else the `escalate` / `bind` verbs are needed), as kube-apiserver's escalation check
//!   (`POST`, `PUT` and server-side apply; other patches are not checked). Impersonation
//!   (`Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`, `kubectl --as`) needs the
//!   `impersonate` verb. No bootstrap roles are created by this option.
//! - **Reviews**: `authentication.k8s.io/v1` `tokenreviews` and `selfsubjectreviews`,
//!   `authorization.k8s.io/v1` `subjectaccessreviews`, `selfsubjectaccessreviews` and
//!   `localsubjectaccessreviews` (create only): a `TokenReview` accepts the user tokens of
//!   [`TestEnvBuilder::user_token`] / [`TestEnv::reviews`] and the issued ServiceAccount tokens
//!   (for their audiences); an access review is answered by the same authorizer as requests
//!   under RBAC: `system:masters`, the [`AccessRule`]s of [`TestEnvBuilder::allow`], then the
//!   stored RBAC rules (`reason: RBAC: allowed by RoleBinding "..." of Role "..." to ...`).
//! - **Subresources**: `status`; `scale` (`autoscaling/v1`) of Deployments, ReplicaSets,
//!   StatefulSets and ReplicationControllers; `serviceaccounts/token`; `pods/eviction` (the
//!   Pod is deleted unless its PodDisruptionBudget allows no disruption: `429` as on
//!   kube-apiserver; no disruption controller runs, so a test sets the budget's `status`);
//!   `pods/log` (for a Pod bound to a node, what [`TestEnv::set_pod_log`],
//!   [`TestEnv::append_pod_log`] and [`TestEnv::set_previous_pod_log`] wrote, empty by
//!   default, with the `PodLogOptions` of kube-apiserver and the kubelet: `container`,
//!   `previous`, `timestamps`, `sinceSeconds`, `sinceTime`, `tailLines`, `limitBytes`,
//!   `follow`; for a Pod without `spec.nodeName`, `204 No Content` at once, as on a cluster);
//!   `pods/exec`, `pods/attach` and `pods/portforward` (the Pod and container checked, then
//!   `400 pod <name> does not have a host assigned` for a Pod without a node; kcr-testenv runs
//!   no kubelet to stream from); `pods/binding`;
//!   `pods/ephemeralcontainers`; `pods/resize`; `certificatesigningrequests/approval`;
//!   `namespaces/finalize`.
//! - **Component statuses**: `componentstatuses` (`get`, `list`) answer as kube-apiserver does
//!   for what kcr-testenv runs: `etcd-0` (its in-memory storage) `Healthy`, `scheduler` and
//!   `controller-manager` (which it does not run) unhealthy with the `connection refused`
//!   message kube-apiserver gives when nothing answers on their ports.
//! - **Encodings**: JSON, each object written in kube-apiserver's field order (`kind`,
//!   `apiVersion`, `metadata` in `ObjectMeta`'s order, then the rest); `PartialObjectMetadata` when asked for (metadata informers);
//!   protobuf request bodies for the built-in kinds kcr-protobuf has tables for (those of the
//!   stable groups of k8s.io/api: typed `kubectl create` commands send them), other protobuf
//!   bodies (and fields the decoder does not know, unless zero) get `415`, a body that is not
//!   protobuf at all (no `k8s\0` prefix, an illegal wire type) a `400` as on kube-apiserver. A client that asks
//!   for protobuf first (`Accept: application/vnd.kubernetes.protobuf, application/json`,
//!   client-go's default) gets objects and list pages of those kinds in protobuf (`k8s\0` +
//!   `runtime.Unknown`, through kcr-protobuf), and watches of the kinds with complete tables
//!   as length-delimited `WatchEvent` frames (`application/vnd.kubernetes.protobuf;stream=watch`),
//!   and errors of any built-in kind as a protobuf `Status` (kube-apiserver negotiates an
//!   error's format as any answer's); other answers, and errors of custom resources, are JSON.
//!   A client that asks for protobuf as `PartialObjectMetadata` first (client-go's metadata
//!   client: `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,
//!   ...`) gets a built-in kind's objects, lists and watch events as `meta.k8s.io/v1`
//!   `PartialObjectMetadata(List)` in protobuf, and its errors in JSON.
//! - **Faults**: see [`Faults`] (in-process) and the admin endpoint (`/kcr/faults/...`, enabled
//!   with [`TestEnvBuilder::admin_endpoint`], on in `kcr-apiserver`): close every watch, close
//!   watches after N events, compact the history, fail the next N requests, add latency, delay
//!   watch events, refuse writes from a user agent or to an object, stop and restart serving on
//!   the same port.
//! - **Robustness**: malformed JSON, wrong `kind`/`apiVersion`, missing names, unknown
//!   resources and oversized bodies get `400`/`404`/`413`/`422` Status errors; no input panics
//!   the server. A connection that does not send its request head (or finish its TLS handshake)
//!   within 32 s is closed, as kube-apiserver's `ReadHeaderTimeout` does; the `Bearer` scheme is
//!   case-insensitive; every request is logged at debug level (target
//!   `kcr_testenv::request`: verb, URI, status, duration).
//!
//! # How it is built
//!
//! The layers are kube-apiserver's, so a rule is found where it lives upstream:
//!
//! - `server`: HTTP, authentication, RBAC (`rbac`), discovery (`discovery`), the admin endpoint.
//! - `endpoints`: the `installer` routes a resource request to its target and verb; the
//!   `handlers` have one module per verb (`get`, `list`, `create`, `update`, `patch` with
//!   server-side apply, `delete` with `deletecollection`, `watch`, and `scale`); `subresources`
//!   has the other subresources.
//! - decoding (`wire`, `protobuf`, `validation::unknown_fields`), then the field manager
//!   (`managed_fields`).
//! - `admission`: the admission chain of a create (and, for DefaultTolerationSeconds, Priority,
//!   MutatingAdmissionPolicy, ValidatingAdmissionPolicy and PodSecurity's namespace labels, of an update), one module per
//!   plugin in kube-apiserver's
//!   order (NamespaceLifecycle, LimitRanger, ServiceAccount, PodSecurity, Priority,
//!   DefaultTolerationSeconds, StorageObjectInUseProtection, MutatingAdmissionPolicy and
//!   ValidatingAdmissionPolicy with CEL,
//!   ResourceQuota), mutating plugins then validating ones, then what a plugin records of an
//!   admitted create (ResourceQuota's `status.used`); each can be switched off
//!   ([`TestEnvBuilder::admission_plugin`], `kcr-apiserver --disable-admission-plugins`).
//! - `registry`: the `generic` store (commit, update preparation, graceful deletion with
//!   finalizers) calls the kind's `rest::Strategy` (defaults, prepare for create and update,
//!   validate, validate update and its order, status update validation, name rule,
//!   unconditional update, how `metadata.generation` is kept, deleted state, resources a kind
//!   declares, termination on delete, answering a delete with the object; field selectors in
//!   `registry::field_labels`); each kind with rules of its own has its file under
//!   `registry/<group>/` (`core`, `apps`, `autoscaling`, `batch`, `coordination`, `discovery`,
//!   `events`, `flowcontrol`, `networking`, `rbac`, `scheduling`, `storage`,
//!   `admissionregistration`, `apiextensions`), custom resources theirs
//!   (`registry::custom_resource`, with `custom_resource` for schemas). Rules shared by several
//!   kinds are in `defaults` (pod specs) and `validation` (metadata, pod specs, options); what
//!   Go's decoding and protobuf storage make of every built-in object is in `wire::go_nulls` and
//!   `wire::go_shape`.
//! - storage: `store` (objects, history, continue tokens) and `watch_cache`; the optional
//!   controllers (`controllers`, `namespace`) act through the same storage.
//!
//! # Conformance
//!
//! `tests/it/conformance.rs` replays the corpora recorded from a real kube-apiserver v1.36.2
//! (`tests/conformance/`; the `sharding` one with the `ShardedListAndWatch` gate on) and prints
//! how many cases conform; `tests/conformance/known-failing.txt` lists, with reasons, the cases
//! that do not yet. The corpus recorded with kube-controller-manager running
//! (`kube-apiserver-v1.36.2-with-controllers.jsonl`) is replayed with the optional controllers on;
//! `tests/conformance/with-controllers-known-failing.txt` lists, with reasons, the cases it does
//! not answer as the real server yet.
//!
//! # What kcr-testenv does not emulate
//!
//! kcr-testenv is an API server only, like envtest's. Nothing runs behind the API:
//!
//! - **No kubelets**: Pods stay `Pending` without `nodeName`, no container starts, no status is
//!   reported; Nodes are plain objects that nobody heartbeats; `pods/log` plays the kubelet's
//!   part with the logs a test writes for a Pod with a `nodeName`; `pods/exec`, `pods/attach`,
//!   `pods/portforward` of a Pod with a node and the `proxy` subresources have no backend.
//! - **No scheduling**: nothing binds Pods to Nodes or preempts by priority.
//! - **No kube-controller-manager** beyond the namespace finalizer (on by default) and, when
//!   asked for, the ServiceAccounts controller, the root CA publisher, the garbage collector,
//!   the resource quota controller, the PVC/PV protection controllers, the Deployment and
//!   ReplicaSet controllers (their Pods stay `Pending`, so rollouts stall as on a cluster without
//!   nodes; they record no Events and never report a progress deadline before a pass after it),
//!   the StatefulSet and Job controllers and the clusterrole-aggregation controller (without it,
//!   only the bootstrap roles are aggregated, once, though authorization always honours
//!   `aggregationRule`): no DaemonSet or CronJob controllers (those workloads keep the status
//!   their clients write), no endpoints or EndpointSlice controllers (beyond the `kubernetes`
//!   Service's), no node lifecycle, no certificate signing or approval, no ServiceAccount token
//!   controller.
//! - **StatefulSet and Job controllers in part**: the StatefulSet controller adopts no orphan
//!   revisions, deletes no claims (`whenScaled: Delete` gives claims no Pod owner) and writes no
//!   status conditions; the Job controller has
//!   no Pod failure policy, backoff limit per index, success policy,
//!   `completedIndexes`/`failedIndexes` or delay before recreating a failed Pod; neither retries
//!   a refused write after a backoff (only after the next change), and their Events are not
//!   combined into "(combined from similar events)" ones.
//! - **No aggregated API servers**: APIServices are stored but nothing is proxied to them;
//!   admission webhooks are stored but never called.
//! - **Admission of updates in part**: the whole admission chain (see the layers below) runs on
//!   creates; on updates, patches and applies only DefaultTolerationSeconds and Priority (which
//!   give a Pod back its tolerations, priority and preemption policy), MutatingAdmissionPolicy,
//!   ValidatingAdmissionPolicy
//!   and PodSecurity's namespace label checks run (no ResourceQuota, LimitRanger or PodSecurity
//!   check of an updated object, nothing on `scale` writes or deletes).
//! - Also not yet: custom resource schema validation and defaulting beyond what the conformance
//!   list above covers, the ServiceAccount admission plugin's refusal of a Pod without a
//!   `default` ServiceAccount when the ServiceAccounts controller is off (kcr-testenv admits it
//!   without the token volume; a named ServiceAccount that does not exist is refused),
//!   dual-stack Services, the update rules of Ingresses, HPAs, CronJobs and the other kinds not
//!   listed under *Update validation*, exact lists older than the watch cache window but not compacted in
//!   storage (kube-apiserver reads them from etcd; kcr-testenv keeps no history beyond its
//!   window), and protobuf responses for kinds without a protobuf table and for errors of
//!   custom resources. Of
//!   what kube-apiserver's decoding of a built-in object into its Go types and encoding again
//!   changes, kcr-testenv does the `null`s and the fields left out (dropped, made
//!   zero values or kept, as each Go field's type and tags say: `lastProbeTime: null` in a Pod
//!   condition, `resources: {}` in a container) and a Pod's `podIP`/`podIPs` and
//!   `hostIP`/`hostIPs`, but not the rest: a zero value sent for a non-pointer `omitempty`
//!   field (`paused: false`) is kept.
//!
//! # Admin endpoint
//!
//! Every call is a `POST` (with the bearer token when one is configured):
//!
//! | path | query | effect |
//! | --- | --- | --- |
//! | `/kcr/faults/close-watches` | | [`Faults::close_all_watches`] |
//! | `/kcr/faults/close-watches-after` | `events=N` (absent: off) | [`Faults::close_watches_after_events`] |
//! | `/kcr/faults/compact` | | [`Faults::compact_history`] |
//! | `/kcr/faults/compact-storage` | | [`Faults::compact_storage`] |
//! | `/kcr/faults/fail` | `count=N&status=S[&verb=V][&resource=R][&retryAfter=SECS]` | [`Faults::fail_next`] |
//! | `/kcr/faults/latency` | `ms=N` | [`Faults::set_latency`] |
//! | `/kcr/faults/watch-delay` | `ms=N` | [`Faults::delay_watch_events`] |
//! | `/kcr/faults/refuse-user-agent` | `userAgent=UA` | [`Faults::refuse_updates_from_user_agent`] |
//! | `/kcr/faults/refuse-object` | `resource=R[&namespace=NS]&name=N` | [`Faults::refuse_updates_to`] |
//! | `/kcr/faults/clear` | | [`Faults::clear`] |
//! | `/kcr/faults/restart` | `downMs=N` (default 500) | stop serving, wait, serve again on the same port |
//!
//! # The binary
//!
//! `kcr-apiserver --port N --kubeconfig-out PATH [--token T] [--tls] [--history-size N]
//! [--bookmark-interval-ms N] [--realistic] [--namespace-controller=false]
//! [--feature-gates=ShardedListAndWatch=true]` serves until interrupted and prints where it listens. Build it on
//! its own with `cargo build -p kcr-testenv --features latest --bin kcr-apiserver` (the `latest`
//! feature selects k8s-openapi's newest Kubernetes version, which a library must not do).

mod admin;
mod admission;
mod api_resources;
mod body;
mod bootstrap;
mod cel_library;
mod component_status;
mod controllers;
mod conversion;
mod custom_resource;
mod defaults;
mod discovery;
mod endpoints;
mod error;
mod faults;
#[doc(hidden)]
pub mod fuzz;
mod managed_fields;
mod meta;
mod namespace;
mod patch;
mod protobuf;
mod rbac;
mod registry;
mod review;
mod selector;
mod serializer;
mod server;
mod sharding;
mod status;
mod store;
mod subresources;
mod test_cluster;
mod test_env;
mod tls;
mod type_meta;
mod typed_kinds;
mod validation;
mod watch_cache;
mod wire;

pub use error::{Error, Result};
pub use faults::{Failure, Faults};
pub use review::{AccessRule, Reviews, UserInfo};
pub use test_cluster::{KUBECONFIG_VAR, REALISTIC_VAR, TestCluster};
pub use test_env::{TestEnv, TestEnvBuilder};
