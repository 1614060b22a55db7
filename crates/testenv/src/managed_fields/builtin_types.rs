//! The structure of the built-in types that field management and strategic merge patch need:
//! for each type its fields, and for each field whether it is a scalar, a named type, a list
//! (atomic, set, or map keyed by `x-kubernetes-list-map-keys`) or a map (granular or atomic),
//! plus the strategic-merge-patch strategy and merge key (`x-kubernetes-patch-strategy`,
//! `x-kubernetes-patch-merge-key`) where the type declares one.
//!
//! Derived from the Kubernetes OpenAPI extensions (`x-kubernetes-list-type`,
//! `x-kubernetes-list-map-keys`, `x-kubernetes-map-type`, the patch strategy tags) of the
//! stable API groups, for every type reachable from a top-level kind. Format, one type a block:
//!
//! ```text
//! <type name>[ atomic]            a struct; `atomic` when the whole struct is one value
//!  <field> <type> [p:<strategy>[:<merge key>]] [d:<default>] [=|~]
//! ```
//!
//! where `<type>` is `s` (scalar), `?` (untyped, deduced), `?a` (untyped, atomic), `@<type
//! name>`, `[a]<type>` (atomic list), `[s]<type>` (set), `[m:<key>,...]<type>` (list map),
//! `{}<type>` (granular map) or `{a}<type>` (atomic map); `=` marks a struct-valued field that
//! a typed zero object always carries (`{}`), as a Go struct value does, and `~` a list or map
//! field it carries as `null` (a Go field without `omitempty`); `d:` is the JSON
//! default of a list-map key field (used when an item omits it).

/// The table (see the module docs for its format).
pub(super) const BUILTIN_TYPES: &str = "\
apiextensions.v1.CustomResourceDefinition
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @apiextensions.v1.CustomResourceDefinitionSpec =
 status @apiextensions.v1.CustomResourceDefinitionStatus =
apps.v1.ControllerRevision
 apiVersion s
 data ?a
 kind s
 metadata @meta.v1.ObjectMeta =
 revision s
apps.v1.DaemonSet
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @apps.v1.DaemonSetSpec =
 status @apps.v1.DaemonSetStatus =
apps.v1.Deployment
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @apps.v1.DeploymentSpec =
 status @apps.v1.DeploymentStatus =
apps.v1.ReplicaSet
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @apps.v1.ReplicaSetSpec =
 status @apps.v1.ReplicaSetStatus =
apps.v1.StatefulSet
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @apps.v1.StatefulSetSpec =
 status @apps.v1.StatefulSetStatus =
autoscaling.v1.HorizontalPodAutoscaler
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @autoscaling.v1.HorizontalPodAutoscalerSpec =
 status @autoscaling.v1.HorizontalPodAutoscalerStatus =
autoscaling.v2.HorizontalPodAutoscaler
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @autoscaling.v2.HorizontalPodAutoscalerSpec =
 status @autoscaling.v2.HorizontalPodAutoscalerStatus =
batch.v1.CronJob
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @batch.v1.CronJobSpec =
 status @batch.v1.CronJobStatus =
batch.v1.Job
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @batch.v1.JobSpec =
 status @batch.v1.JobStatus =
certificates.v1.CertificateSigningRequest
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @certificates.v1.CertificateSigningRequestSpec =
 status @certificates.v1.CertificateSigningRequestStatus =
certificates.v1.ClusterTrustBundle
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @certificates.v1.ClusterTrustBundleSpec =
certificates.v1.PodCertificateRequest
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @certificates.v1.PodCertificateRequestSpec =
 status @certificates.v1.PodCertificateRequestStatus =
coordination.v1.Lease
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @coordination.v1.LeaseSpec =
core.v1.ComponentStatus
 apiVersion s
 conditions [m:type]@core.v1.ComponentCondition p:merge:type
 kind s
 metadata @meta.v1.ObjectMeta =
core.v1.ConfigMap
 apiVersion s
 binaryData {}s
 data {}s
 immutable s
 kind s
 metadata @meta.v1.ObjectMeta =
core.v1.Endpoints
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 subsets [a]@core.v1.EndpointSubset
core.v1.Event
 action s
 apiVersion s
 count s
 eventTime s
 firstTimestamp s
 involvedObject @core.v1.ObjectReference =
 kind s
 lastTimestamp s
 message s
 metadata @meta.v1.ObjectMeta =
 reason s
 related @core.v1.ObjectReference
 reportingComponent s
 reportingInstance s
 series @core.v1.EventSeries
 source @core.v1.EventSource =
 type s
core.v1.LimitRange
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.LimitRangeSpec =
core.v1.Namespace
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.NamespaceSpec =
 status @core.v1.NamespaceStatus =
core.v1.Node
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.NodeSpec =
 status @core.v1.NodeStatus =
core.v1.PersistentVolume
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.PersistentVolumeSpec =
 status @core.v1.PersistentVolumeStatus =
core.v1.PersistentVolumeClaim
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.PersistentVolumeClaimSpec =
 status @core.v1.PersistentVolumeClaimStatus =
core.v1.Pod
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.PodSpec =
 status @core.v1.PodStatus =
core.v1.PodTemplate
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 template @core.v1.PodTemplateSpec =
core.v1.ReplicationController
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.ReplicationControllerSpec =
 status @core.v1.ReplicationControllerStatus =
core.v1.ResourceQuota
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.ResourceQuotaSpec =
 status @core.v1.ResourceQuotaStatus =
core.v1.Secret
 apiVersion s
 data {}s
 immutable s
 kind s
 metadata @meta.v1.ObjectMeta =
 stringData {}s
 type s
core.v1.Service
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.ServiceSpec =
 status @core.v1.ServiceStatus =
core.v1.ServiceAccount
 apiVersion s
 automountServiceAccountToken s
 imagePullSecrets [a]@core.v1.LocalObjectReference
 kind s
 metadata @meta.v1.ObjectMeta =
 secrets [m:name]@core.v1.ObjectReference p:merge:name
discovery.v1.EndpointSlice
 addressType s
 apiVersion s
 endpoints [a]@discovery.v1.Endpoint ~
 kind s
 metadata @meta.v1.ObjectMeta =
 ports [a]@discovery.v1.EndpointPort ~
events.v1.Event
 action s
 apiVersion s
 deprecatedCount s
 deprecatedFirstTimestamp s
 deprecatedLastTimestamp s
 deprecatedSource @core.v1.EventSource =
 eventTime s
 kind s
 metadata @meta.v1.ObjectMeta =
 note s
 reason s
 regarding @core.v1.ObjectReference =
 related @core.v1.ObjectReference
 reportingController s
 reportingInstance s
 series @events.v1.EventSeries
 type s
networking.v1.IPAddress
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @networking.v1.IPAddressSpec =
networking.v1.Ingress
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @networking.v1.IngressSpec =
 status @networking.v1.IngressStatus =
networking.v1.IngressClass
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @networking.v1.IngressClassSpec =
networking.v1.NetworkPolicy
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @networking.v1.NetworkPolicySpec =
networking.v1.ServiceCIDR
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @networking.v1.ServiceCIDRSpec =
 status @networking.v1.ServiceCIDRStatus =
node.v1.RuntimeClass
 apiVersion s
 handler s
 kind s
 metadata @meta.v1.ObjectMeta =
 overhead @node.v1.Overhead
 scheduling @node.v1.Scheduling
policy.v1.Eviction
 apiVersion s
 deleteOptions @meta.v1.DeleteOptions
 kind s
 metadata @meta.v1.ObjectMeta =
policy.v1.PodDisruptionBudget
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @policy.v1.PodDisruptionBudgetSpec =
 status @policy.v1.PodDisruptionBudgetStatus =
rbac.v1.ClusterRole
 aggregationRule @rbac.v1.AggregationRule
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 rules [a]@rbac.v1.PolicyRule ~
rbac.v1.ClusterRoleBinding
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 roleRef @rbac.v1.RoleRef =
 subjects [a]@rbac.v1.Subject
rbac.v1.Role
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 rules [a]@rbac.v1.PolicyRule ~
rbac.v1.RoleBinding
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 roleRef @rbac.v1.RoleRef =
 subjects [a]@rbac.v1.Subject
scheduling.v1.PriorityClass
 apiVersion s
 description s
 globalDefault s
 kind s
 metadata @meta.v1.ObjectMeta =
 preemptionPolicy s
 value s
storage.v1.CSIDriver
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @storage.v1.CSIDriverSpec =
storage.v1.CSINode
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @storage.v1.CSINodeSpec =
 status @storage.v1.CSINodeStatus =
storage.v1.CSIStorageCapacity
 apiVersion s
 capacity s
 kind s
 maximumVolumeSize s
 metadata @meta.v1.ObjectMeta =
 nodeTopology @meta.v1.LabelSelector
 storageClassName s
storage.v1.StorageClass
 allowVolumeExpansion s
 allowedTopologies [a]@core.v1.TopologySelectorTerm
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 mountOptions [a]s
 parameters {}s
 provisioner s
 reclaimPolicy s
 volumeBindingMode s
storage.v1.VolumeAttachment
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @storage.v1.VolumeAttachmentSpec =
 status @storage.v1.VolumeAttachmentStatus =
storage.v1.VolumeAttributesClass
 apiVersion s
 driverName s
 kind s
 metadata @meta.v1.ObjectMeta =
 parameters {}s
meta.v1.ObjectMeta
 annotations {}s
 creationTimestamp s
 deletionGracePeriodSeconds s
 deletionTimestamp s
 finalizers [s]s p:merge
 generateName s
 generation s
 labels {}s
 managedFields [a]@meta.v1.ManagedFieldsEntry
 name s
 namespace s
 ownerReferences [m:uid]@meta.v1.OwnerReference p:merge:uid
 resourceVersion s
 selfLink s
 uid s
apps.v1.DaemonSetSpec
 minReadySeconds s
 revisionHistoryLimit s
 selector @meta.v1.LabelSelector
 template @core.v1.PodTemplateSpec =
 updateStrategy @apps.v1.DaemonSetUpdateStrategy =
apps.v1.DaemonSetStatus
 collisionCount s
 conditions [m:type]@apps.v1.DaemonSetCondition p:merge:type
 currentNumberScheduled s
 desiredNumberScheduled s
 numberAvailable s
 numberMisscheduled s
 numberReady s
 numberUnavailable s
 observedGeneration s
 updatedNumberScheduled s
apps.v1.DeploymentSpec
 minReadySeconds s
 paused s
 progressDeadlineSeconds s
 replicas s
 revisionHistoryLimit s
 selector @meta.v1.LabelSelector
 strategy @apps.v1.DeploymentStrategy p:retainKeys =
 template @core.v1.PodTemplateSpec =
apps.v1.DeploymentStatus
 availableReplicas s
 collisionCount s
 conditions [m:type]@apps.v1.DeploymentCondition p:merge:type
 observedGeneration s
 readyReplicas s
 replicas s
 terminatingReplicas s
 unavailableReplicas s
 updatedReplicas s
apps.v1.ReplicaSetSpec
 minReadySeconds s
 replicas s
 selector @meta.v1.LabelSelector
 template @core.v1.PodTemplateSpec =
apps.v1.ReplicaSetStatus
 availableReplicas s
 conditions [m:type]@apps.v1.ReplicaSetCondition p:merge:type
 fullyLabeledReplicas s
 observedGeneration s
 readyReplicas s
 replicas s
 terminatingReplicas s
apps.v1.StatefulSetSpec
 minReadySeconds s
 ordinals @apps.v1.StatefulSetOrdinals
 persistentVolumeClaimRetentionPolicy @apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy
 podManagementPolicy s
 replicas s
 revisionHistoryLimit s
 selector @meta.v1.LabelSelector
 serviceName s
 template @core.v1.PodTemplateSpec =
 updateStrategy @apps.v1.StatefulSetUpdateStrategy =
 volumeClaimTemplates [a]@core.v1.PersistentVolumeClaim
apps.v1.StatefulSetStatus
 availableReplicas s
 collisionCount s
 conditions [m:type]@apps.v1.StatefulSetCondition p:merge:type
 currentReplicas s
 currentRevision s
 observedGeneration s
 readyReplicas s
 replicas s
 updateRevision s
 updatedReplicas s
autoscaling.v1.HorizontalPodAutoscalerSpec
 maxReplicas s
 minReplicas s
 scaleTargetRef @autoscaling.v1.CrossVersionObjectReference =
 targetCPUUtilizationPercentage s
autoscaling.v1.HorizontalPodAutoscalerStatus
 currentCPUUtilizationPercentage s
 currentReplicas s
 desiredReplicas s
 lastScaleTime s
 observedGeneration s
autoscaling.v2.HorizontalPodAutoscalerSpec
 behavior @autoscaling.v2.HorizontalPodAutoscalerBehavior
 maxReplicas s
 metrics [a]@autoscaling.v2.MetricSpec
 minReplicas s
 scaleTargetRef @autoscaling.v2.CrossVersionObjectReference =
autoscaling.v2.HorizontalPodAutoscalerStatus
 conditions [m:type]@autoscaling.v2.HorizontalPodAutoscalerCondition p:merge:type
 currentMetrics [a]@autoscaling.v2.MetricStatus ~
 currentReplicas s
 desiredReplicas s
 lastScaleTime s
 observedGeneration s
batch.v1.CronJobSpec
 concurrencyPolicy s
 failedJobsHistoryLimit s
 jobTemplate @batch.v1.JobTemplateSpec =
 schedule s
 startingDeadlineSeconds s
 successfulJobsHistoryLimit s
 suspend s
 timeZone s
batch.v1.CronJobStatus
 active [a]@core.v1.ObjectReference
 lastScheduleTime s
 lastSuccessfulTime s
batch.v1.JobSpec
 activeDeadlineSeconds s
 backoffLimit s
 backoffLimitPerIndex s
 completionMode s
 completions s
 managedBy s
 manualSelector s
 maxFailedIndexes s
 parallelism s
 podFailurePolicy @batch.v1.PodFailurePolicy
 podReplacementPolicy s
 scheduling @batch.v1.JobSchedulingConfiguration
 selector @meta.v1.LabelSelector
 successPolicy @batch.v1.SuccessPolicy
 suspend s
 template @core.v1.PodTemplateSpec =
 ttlSecondsAfterFinished s
batch.v1.JobStatus
 active s
 completedIndexes s
 completionTime s
 conditions [a]@batch.v1.JobCondition p:merge:type
 failed s
 failedIndexes s
 ready s
 startTime s
 succeeded s
 terminating s
 uncountedTerminatedPods @batch.v1.UncountedTerminatedPods
certificates.v1.CertificateSigningRequestSpec
 expirationSeconds s
 extra {}[a]s
 groups [a]s
 request s
 signerName s
 uid s
 usages [a]s
 username s
certificates.v1.CertificateSigningRequestStatus
 certificate s
 conditions [m:type]@certificates.v1.CertificateSigningRequestCondition
certificates.v1.ClusterTrustBundleSpec
 signerName s
 trustBundle s
certificates.v1.PodCertificateRequestSpec
 maxExpirationSeconds s
 nodeName s
 nodeUID s
 podName s
 podUID s
 serviceAccountName s
 serviceAccountUID s
 signerName s
 stubPKCS10Request s
 unverifiedUserAnnotations {}s
certificates.v1.PodCertificateRequestStatus
 beginRefreshAt s
 certificateChain s
 conditions [m:type]@meta.v1.Condition p:merge:type
 notAfter s
 notBefore s
coordination.v1.LeaseSpec
 acquireTime s
 holderIdentity s
 leaseDurationSeconds s
 leaseTransitions s
 preferredHolder s
 renewTime s
 strategy s
core.v1.ComponentCondition
 error s
 message s
 status s
 type s d:\"\"
core.v1.EndpointSubset
 addresses [a]@core.v1.EndpointAddress
 notReadyAddresses [a]@core.v1.EndpointAddress
 ports [a]@core.v1.EndpointPort
core.v1.ObjectReference atomic
 apiVersion s
 fieldPath s
 kind s
 name s
 namespace s
 resourceVersion s
 uid s
core.v1.EventSeries
 count s
 lastObservedTime s
core.v1.EventSource
 component s
 host s
core.v1.LimitRangeSpec
 limits [a]@core.v1.LimitRangeItem ~
core.v1.NamespaceSpec
 finalizers [a]s
core.v1.NamespaceStatus
 conditions [m:type]@core.v1.NamespaceCondition p:merge:type
 phase s
core.v1.NodeSpec
 configSource @core.v1.NodeConfigSource
 externalID s
 podCIDR s
 podCIDRs [s]s p:merge
 podPreemptionPolicy @core.v1.NodePodPreemptionPolicy
 providerID s
 taints [a]@core.v1.Taint
 unschedulable s
core.v1.NodeStatus
 addresses [m:type]@core.v1.NodeAddress p:merge:type
 allocatable {}s
 capacity {}s
 conditions [m:type]@core.v1.NodeCondition p:merge:type
 config @core.v1.NodeConfigStatus
 daemonEndpoints @core.v1.NodeDaemonEndpoints =
 declaredFeatures [a]s
 features @core.v1.NodeFeatures
 images [a]@core.v1.ContainerImage
 nodeInfo @core.v1.NodeSystemInfo =
 phase s
 runtimeHandlers [a]@core.v1.NodeRuntimeHandler
 volumesAttached [a]@core.v1.AttachedVolume
 volumesInUse [a]s
core.v1.PersistentVolumeSpec
 accessModes [a]s
 awsElasticBlockStore @core.v1.AWSElasticBlockStoreVolumeSource
 azureDisk @core.v1.AzureDiskVolumeSource
 azureFile @core.v1.AzureFilePersistentVolumeSource
 capacity {}s
 cephfs @core.v1.CephFSPersistentVolumeSource
 cinder @core.v1.CinderPersistentVolumeSource
 claimRef @core.v1.ObjectReference
 csi @core.v1.CSIPersistentVolumeSource
 fc @core.v1.FCVolumeSource
 flexVolume @core.v1.FlexPersistentVolumeSource
 flocker @core.v1.FlockerVolumeSource
 gcePersistentDisk @core.v1.GCEPersistentDiskVolumeSource
 glusterfs @core.v1.GlusterfsPersistentVolumeSource
 hostPath @core.v1.HostPathVolumeSource
 iscsi @core.v1.ISCSIPersistentVolumeSource
 local @core.v1.LocalVolumeSource
 mountOptions [a]s
 nfs @core.v1.NFSVolumeSource
 nodeAffinity @core.v1.VolumeNodeAffinity
 persistentVolumeReclaimPolicy s
 photonPersistentDisk @core.v1.PhotonPersistentDiskVolumeSource
 portworxVolume @core.v1.PortworxVolumeSource
 quobyte @core.v1.QuobyteVolumeSource
 rbd @core.v1.RBDPersistentVolumeSource
 scaleIO @core.v1.ScaleIOPersistentVolumeSource
 storageClassName s
 storageos @core.v1.StorageOSPersistentVolumeSource
 volumeAttributesClassName s
 volumeMode s
 vsphereVolume @core.v1.VsphereVirtualDiskVolumeSource
core.v1.PersistentVolumeStatus
 lastPhaseTransitionTime s
 message s
 phase s
 reason s
core.v1.PersistentVolumeClaimSpec
 accessModes [a]s
 dataSource @core.v1.TypedLocalObjectReference
 dataSourceRef @core.v1.TypedObjectReference
 resources @core.v1.VolumeResourceRequirements =
 selector @meta.v1.LabelSelector
 storageClassName s
 volumeAttributesClassName s
 volumeMode s
 volumeName s
core.v1.PersistentVolumeClaimStatus
 accessModes [a]s
 allocatedResourceStatuses {}s
 allocatedResources {}s
 capacity {}s
 conditions [m:type]@core.v1.PersistentVolumeClaimCondition p:merge:type
 currentVolumeAttributesClassName s
 healthStatus @core.v1.VolumeHealthStatus
 modifyVolumeStatus @core.v1.ModifyVolumeStatus
 phase s
core.v1.PodSpec
 activeDeadlineSeconds s
 affinity @core.v1.Affinity
 automountServiceAccountToken s
 containers [m:name]@core.v1.Container p:merge:name ~
 dnsConfig @core.v1.PodDNSConfig
 dnsPolicy s
 enableServiceLinks s
 ephemeralContainers [m:name]@core.v1.EphemeralContainer p:merge:name
 evictionResponders [m:name]@core.v1.EvictionResponder p:merge:name
 hostAliases [m:ip]@core.v1.HostAlias p:merge:ip
 hostIPC s
 hostNetwork s
 hostPID s
 hostUsers s
 hostname s
 hostnameOverride s
 imagePullSecrets [m:name]@core.v1.LocalObjectReference p:merge:name
 initContainers [m:name]@core.v1.Container p:merge:name
 nodeName s
 nodeSelector {a}s
 os @core.v1.PodOS
 overhead {}s
 preemptionPolicy s
 priority s
 priorityClassName s
 readinessGates [a]@core.v1.PodReadinessGate
 resourceClaims [m:name]@core.v1.PodResourceClaim p:merge,retainKeys:name
 resources @core.v1.ResourceRequirements
 restartPolicy s
 runtimeClassName s
 schedulerName s
 schedulingGates [m:name]@core.v1.PodSchedulingGate p:merge:name
 schedulingGroup @core.v1.PodSchedulingGroup
 securityContext @core.v1.PodSecurityContext
 serviceAccount s
 serviceAccountName s
 setHostnameAsFQDN s
 shareProcessNamespace s
 subdomain s
 terminationGracePeriodSeconds s
 tolerations [a]@core.v1.Toleration
 topologySpreadConstraints [m:topologyKey,whenUnsatisfiable]@core.v1.TopologySpreadConstraint p:merge:topologyKey
 volumes [m:name]@core.v1.Volume p:merge,retainKeys:name
core.v1.PodStatus
 allocatedResources {}s
 conditions [m:type]@core.v1.PodCondition p:merge:type
 containerStatuses [a]@core.v1.ContainerStatus
 ephemeralContainerStatuses [a]@core.v1.ContainerStatus
 extendedResourceClaimStatus @core.v1.PodExtendedResourceClaimStatus
 hostIP s
 hostIPs [a]@core.v1.HostIP p:merge:ip
 initContainerStatuses [a]@core.v1.ContainerStatus
 message s
 nodeAllocatableResourceClaimStatuses [m:resourceClaimName]@core.v1.NodeAllocatableResourceClaimStatus p:merge:resourceClaimName
 nominatedNodeName s
 observedGeneration s
 phase s
 podIP s
 podIPs [m:ip]@core.v1.PodIP p:merge:ip
 qosClass s
 reason s
 resize s
 resourceClaimStatuses [m:name]@core.v1.PodResourceClaimStatus p:merge,retainKeys:name
 resources @core.v1.ResourceRequirements
 startTime s
 volumeHealth [m:name]@core.v1.PodVolumeHealth
core.v1.PodTemplateSpec
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.PodSpec =
core.v1.ReplicationControllerSpec
 minReadySeconds s
 replicas s
 selector {a}s
 template @core.v1.PodTemplateSpec
core.v1.ReplicationControllerStatus
 availableReplicas s
 conditions [m:type]@core.v1.ReplicationControllerCondition p:merge:type
 fullyLabeledReplicas s
 observedGeneration s
 readyReplicas s
 replicas s
core.v1.ResourceQuotaSpec
 hard {}s
 scopeSelector @core.v1.ScopeSelector
 scopes [a]s
core.v1.ResourceQuotaStatus
 hard {}s
 used {}s
core.v1.ServiceSpec
 allocateLoadBalancerNodePorts s
 clusterIP s
 clusterIPs [a]s
 externalIPs [a]s
 externalName s
 externalTrafficPolicy s
 healthCheckNodePort s
 internalTrafficPolicy s
 ipFamilies [a]s
 ipFamilyPolicy s
 loadBalancerClass s
 loadBalancerIP s
 loadBalancerSourceRanges [a]s
 ports [m:port,protocol]@core.v1.ServicePort p:merge:port
 publishNotReadyAddresses s
 selector {a}s
 sessionAffinity s
 sessionAffinityConfig @core.v1.SessionAffinityConfig
 trafficDistribution s
 type s
core.v1.ServiceStatus
 conditions [m:type]@meta.v1.Condition p:merge:type
 loadBalancer @core.v1.LoadBalancerStatus =
core.v1.LocalObjectReference atomic
 name s d:\"\"
discovery.v1.Endpoint
 addresses [s]s ~
 conditions @discovery.v1.EndpointConditions =
 deprecatedTopology {}s
 hints @discovery.v1.EndpointHints
 hostname s
 nodeName s
 targetRef @core.v1.ObjectReference
 zone s
discovery.v1.EndpointPort atomic
 appProtocol s
 name s
 port s
 protocol s
events.v1.EventSeries
 count s
 lastObservedTime s
networking.v1.IPAddressSpec
 parentRef @networking.v1.ParentReference
networking.v1.IngressSpec
 defaultBackend @networking.v1.IngressBackend
 ingressClassName s
 rules [a]@networking.v1.IngressRule
 tls [a]@networking.v1.IngressTLS
networking.v1.IngressStatus
 loadBalancer @networking.v1.IngressLoadBalancerStatus =
networking.v1.IngressClassSpec
 controller s
 parameters @networking.v1.IngressClassParametersReference
networking.v1.NetworkPolicySpec
 egress [a]@networking.v1.NetworkPolicyEgressRule
 ingress [a]@networking.v1.NetworkPolicyIngressRule
 podSelector @meta.v1.LabelSelector =
 policyTypes [a]s
networking.v1.ServiceCIDRSpec
 cidrs [a]s
networking.v1.ServiceCIDRStatus
 conditions [m:type]@meta.v1.Condition p:merge:type
node.v1.Overhead
 podFixed {}s
node.v1.Scheduling
 nodeSelector {a}s
 tolerations [a]@core.v1.Toleration
meta.v1.DeleteOptions
 apiVersion s
 dryRun [a]s
 gracePeriodSeconds s
 ignoreStoreReadErrorWithClusterBreakingPotential s
 kind s
 orphanDependents s
 preconditions @meta.v1.Preconditions
 propagationPolicy s
policy.v1.PodDisruptionBudgetSpec
 maxUnavailable s
 minAvailable s
 selector @meta.v1.LabelSelector p:replace
 unhealthyPodEvictionPolicy s
policy.v1.PodDisruptionBudgetStatus
 conditions [m:type]@meta.v1.Condition p:merge:type
 currentHealthy s
 desiredHealthy s
 disruptedPods {}s
 disruptionsAllowed s
 expectedPods s
 observedGeneration s
rbac.v1.AggregationRule
 clusterRoleSelectors [a]@meta.v1.LabelSelector
rbac.v1.PolicyRule
 apiGroups [a]s
 nonResourceURLs [a]s
 resourceNames [a]s
 resources [a]s
 verbs [a]s ~
rbac.v1.RoleRef atomic
 apiGroup s
 kind s
 name s
rbac.v1.Subject atomic
 apiGroup s
 kind s
 name s
 namespace s
storage.v1.CSIDriverSpec
 attachRequired s
 fsGroupPolicy s
 nodeAllocatableUpdatePeriodSeconds s
 podInfoOnMount s
 preventPodSchedulingIfMissing s
 requiresRepublish s
 seLinuxMount s
 serviceAccountTokenInSecrets s
 storageCapacity s
 tokenRequests [a]@storage.v1.TokenRequest
 volumeLifecycleModes [s]s
storage.v1.CSINodeSpec
 drivers [m:name]@storage.v1.CSINodeDriver p:merge:name ~
storage.v1.CSINodeStatus
 storageHealth [m:name]@storage.v1.StorageHealth p:merge:name
meta.v1.LabelSelector atomic
 matchExpressions [a]@meta.v1.LabelSelectorRequirement
 matchLabels {}s
core.v1.TopologySelectorTerm atomic
 matchLabelExpressions [a]@core.v1.TopologySelectorLabelRequirement
storage.v1.VolumeAttachmentSpec
 attacher s
 nodeName s
 source @storage.v1.VolumeAttachmentSource =
storage.v1.VolumeAttachmentStatus
 attachError @storage.v1.VolumeError
 attached s
 attachmentMetadata {}s
 detachError @storage.v1.VolumeError
meta.v1.ManagedFieldsEntry
 apiVersion s
 fieldsType s
 fieldsV1 ?
 manager s
 operation s
 subresource s
 time s
meta.v1.OwnerReference atomic
 apiVersion s
 blockOwnerDeletion s
 controller s
 kind s
 name s
 uid s d:\"\"
apps.v1.DaemonSetUpdateStrategy
 rollingUpdate @apps.v1.RollingUpdateDaemonSet
 type s
apiextensions.v1.CustomResourceConversion
 strategy s
 webhook ?
apiextensions.v1.CustomResourceDefinitionCondition
 lastTransitionTime s
 message s
 reason s
 status s
 type s
apiextensions.v1.CustomResourceDefinitionNames
 categories [a]s
 kind s
 listKind s
 plural s
 shortNames [a]s
 singular s
apiextensions.v1.CustomResourceDefinitionSpec
 conversion @apiextensions.v1.CustomResourceConversion
 group s
 names @apiextensions.v1.CustomResourceDefinitionNames =
 preserveUnknownFields s
 scope s
 versions [a]?
apiextensions.v1.CustomResourceDefinitionStatus
 acceptedNames @apiextensions.v1.CustomResourceDefinitionNames =
 conditions [m:type]@apiextensions.v1.CustomResourceDefinitionCondition ~
 storedVersions [a]s ~
apps.v1.DaemonSetCondition
 lastTransitionTime s
 message s
 reason s
 status s
 type s d:\"\"
apps.v1.DeploymentStrategy
 rollingUpdate @apps.v1.RollingUpdateDeployment
 type s
apps.v1.DeploymentCondition
 lastTransitionTime s
 lastUpdateTime s
 message s
 reason s
 status s
 type s d:\"\"
apps.v1.ReplicaSetCondition
 lastTransitionTime s
 message s
 reason s
 status s
 type s d:\"\"
apps.v1.StatefulSetOrdinals
 start s
apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy
 whenDeleted s
 whenScaled s
apps.v1.StatefulSetUpdateStrategy
 rollingUpdate @apps.v1.RollingUpdateStatefulSetStrategy
 type s
apps.v1.StatefulSetCondition
 lastTransitionTime s
 message s
 reason s
 status s
 type s d:\"\"
autoscaling.v1.CrossVersionObjectReference atomic
 apiVersion s
 kind s
 name s
autoscaling.v2.HorizontalPodAutoscalerBehavior
 scaleDown @autoscaling.v2.HPAScalingRules
 scaleUp @autoscaling.v2.HPAScalingRules
autoscaling.v2.MetricSpec
 containerResource @autoscaling.v2.ContainerResourceMetricSource
 external @autoscaling.v2.ExternalMetricSource
 object @autoscaling.v2.ObjectMetricSource
 pods @autoscaling.v2.PodsMetricSource
 resource @autoscaling.v2.ResourceMetricSource
 type s
autoscaling.v2.CrossVersionObjectReference
 apiVersion s
 kind s
 name s
autoscaling.v2.HorizontalPodAutoscalerCondition
 lastTransitionTime s
 message s
 observedGeneration s
 reason s
 status s
 type s d:\"\"
autoscaling.v2.MetricStatus
 containerResource @autoscaling.v2.ContainerResourceMetricStatus
 external @autoscaling.v2.ExternalMetricStatus
 object @autoscaling.v2.ObjectMetricStatus
 pods @autoscaling.v2.PodsMetricStatus
 resource @autoscaling.v2.ResourceMetricStatus
 type s
batch.v1.JobTemplateSpec
 metadata @meta.v1.ObjectMeta =
 spec @batch.v1.JobSpec =
batch.v1.PodFailurePolicy
 rules [a]@batch.v1.PodFailurePolicyRule ~
batch.v1.JobSchedulingConfiguration
 disruptionMode @scheduling.v1alpha3.WorkloadPodGroupDisruptionMode
 resourceClaims [m:name]@scheduling.v1alpha3.WorkloadPodGroupResourceClaim p:merge:name
 schedulingConstraints @scheduling.v1alpha3.WorkloadPodGroupSchedulingConstraints
 schedulingPolicy @scheduling.v1alpha3.WorkloadPodGroupSchedulingPolicy
batch.v1.SuccessPolicy
 rules [a]@batch.v1.SuccessPolicyRule ~
batch.v1.JobCondition
 lastProbeTime s
 lastTransitionTime s
 message s
 reason s
 status s
 type s
batch.v1.UncountedTerminatedPods
 failed [s]s
 succeeded [s]s
certificates.v1.CertificateSigningRequestCondition
 lastTransitionTime s
 lastUpdateTime s
 message s
 reason s
 status s
 type s d:\"\"
meta.v1.Condition
 lastTransitionTime s
 message s
 observedGeneration s
 reason s
 status s
 type s d:\"\"
core.v1.EndpointAddress atomic
 hostname s
 ip s
 nodeName s
 targetRef @core.v1.ObjectReference
core.v1.EndpointPort atomic
 appProtocol s
 name s
 port s
 protocol s
core.v1.LimitRangeItem
 default {}s
 defaultRequest {}s
 max {}s
 maxLimitRequestRatio {}s
 min {}s
 type s
core.v1.NamespaceCondition
 lastTransitionTime s
 message s
 reason s
 status s
 type s d:\"\"
core.v1.NodeConfigSource
 configMap @core.v1.ConfigMapNodeConfigSource
core.v1.NodePodPreemptionPolicy
 disableResizePreemption [s]s
core.v1.Taint
 effect s
 key s
 timeAdded s
 value s
core.v1.NodeAddress
 address s
 type s d:\"\"
core.v1.NodeCondition
 lastHeartbeatTime s
 lastTransitionTime s
 message s
 reason s
 status s
 type s d:\"\"
core.v1.NodeConfigStatus
 active @core.v1.NodeConfigSource
 assigned @core.v1.NodeConfigSource
 error s
 lastKnownGood @core.v1.NodeConfigSource
core.v1.NodeDaemonEndpoints
 kubeletEndpoint @core.v1.DaemonEndpoint =
core.v1.NodeFeatures
 supplementalGroupsPolicy s
core.v1.ContainerImage
 names [a]s ~
 sizeBytes s
core.v1.NodeSystemInfo
 architecture s
 bootID s
 containerRuntimeVersion s
 kernelVersion s
 kubeProxyVersion s
 kubeletVersion s
 machineID s
 operatingSystem s
 osImage s
 runningInUserNamespace s
 swap @core.v1.NodeSwapStatus
 systemUUID s
core.v1.NodeRuntimeHandler
 features @core.v1.NodeRuntimeHandlerFeatures
 name s
core.v1.AttachedVolume
 devicePath s
 name s
core.v1.AWSElasticBlockStoreVolumeSource
 fsType s
 partition s
 readOnly s
 volumeID s
core.v1.AzureDiskVolumeSource
 cachingMode s
 diskName s
 diskURI s
 fsType s
 kind s
 readOnly s
core.v1.AzureFilePersistentVolumeSource
 readOnly s
 secretName s
 secretNamespace s
 shareName s
core.v1.CephFSPersistentVolumeSource
 monitors [a]s ~
 path s
 readOnly s
 secretFile s
 secretRef @core.v1.SecretReference
 user s
core.v1.CinderPersistentVolumeSource
 fsType s
 readOnly s
 secretRef @core.v1.SecretReference
 volumeID s
core.v1.CSIPersistentVolumeSource
 controllerExpandSecretRef @core.v1.SecretReference
 controllerPublishSecretRef @core.v1.SecretReference
 driver s
 fsType s
 nodeExpandSecretRef @core.v1.SecretReference
 nodePublishSecretRef @core.v1.SecretReference
 nodeStageSecretRef @core.v1.SecretReference
 readOnly s
 volumeAttributes {}s
 volumeHandle s
core.v1.FCVolumeSource
 fsType s
 lun s
 readOnly s
 targetWWNs [a]s
 wwids [a]s
core.v1.FlexPersistentVolumeSource
 driver s
 fsType s
 options {}s
 readOnly s
 secretRef @core.v1.SecretReference
core.v1.FlockerVolumeSource
 datasetName s
 datasetUUID s
core.v1.GCEPersistentDiskVolumeSource
 fsType s
 partition s
 pdName s
 readOnly s
core.v1.GlusterfsPersistentVolumeSource
 endpoints s
 endpointsNamespace s
 path s
 readOnly s
core.v1.HostPathVolumeSource
 path s
 type s
core.v1.ISCSIPersistentVolumeSource
 chapAuthDiscovery s
 chapAuthSession s
 fsType s
 initiatorName s
 iqn s
 iscsiInterface s
 lun s
 portals [a]s
 readOnly s
 secretRef @core.v1.SecretReference
 targetPortal s
core.v1.LocalVolumeSource
 fsType s
 path s
core.v1.NFSVolumeSource
 path s
 readOnly s
 server s
core.v1.VolumeNodeAffinity
 required @core.v1.NodeSelector
core.v1.PhotonPersistentDiskVolumeSource
 fsType s
 pdID s
core.v1.PortworxVolumeSource
 fsType s
 readOnly s
 volumeID s
core.v1.QuobyteVolumeSource
 group s
 readOnly s
 registry s
 tenant s
 user s
 volume s
core.v1.RBDPersistentVolumeSource
 fsType s
 image s
 keyring s
 monitors [a]s ~
 pool s
 readOnly s
 secretRef @core.v1.SecretReference
 user s
core.v1.ScaleIOPersistentVolumeSource
 fsType s
 gateway s
 protectionDomain s
 readOnly s
 secretRef @core.v1.SecretReference
 sslEnabled s
 storageMode s
 storagePool s
 system s
 volumeName s
core.v1.StorageOSPersistentVolumeSource
 fsType s
 readOnly s
 secretRef @core.v1.ObjectReference
 volumeName s
 volumeNamespace s
core.v1.VsphereVirtualDiskVolumeSource
 fsType s
 storagePolicyID s
 storagePolicyName s
 volumePath s
core.v1.TypedLocalObjectReference atomic
 apiGroup s
 kind s
 name s
core.v1.TypedObjectReference
 apiGroup s
 kind s
 name s
 namespace s
core.v1.VolumeResourceRequirements
 limits {}s
 requests {}s
core.v1.PersistentVolumeClaimCondition
 lastProbeTime s
 lastTransitionTime s
 message s
 reason s
 status s
 type s d:\"\"
core.v1.VolumeHealthStatus
 healthConditions [m:status,reason]@core.v1.VolumeHealthCondition p:merge:status
 lastTransitionTime s
core.v1.ModifyVolumeStatus
 status s
 targetVolumeAttributesClassName s
core.v1.Affinity
 nodeAffinity @core.v1.NodeAffinity
 podAffinity @core.v1.PodAffinity
 podAntiAffinity @core.v1.PodAntiAffinity
core.v1.Container
 args [a]s
 command [a]s
 env [m:name]@core.v1.EnvVar p:merge:name
 envFrom [a]@core.v1.EnvFromSource
 image s
 imagePullPolicy s
 lifecycle @core.v1.Lifecycle
 livenessProbe @core.v1.Probe
 name s d:\"\"
 ports [m:containerPort,protocol]@core.v1.ContainerPort p:merge:containerPort
 readinessProbe @core.v1.Probe
 resizePolicy [a]@core.v1.ContainerResizePolicy
 resources @core.v1.ResourceRequirements =
 restartPolicy s
 restartPolicyRules [a]@core.v1.ContainerRestartRule
 securityContext @core.v1.SecurityContext
 startupProbe @core.v1.Probe
 stdin s
 stdinOnce s
 terminationMessagePath s
 terminationMessagePolicy s
 tty s
 volumeDevices [m:devicePath]@core.v1.VolumeDevice p:merge:devicePath
 volumeMounts [m:mountPath]@core.v1.VolumeMount p:merge:mountPath
 workingDir s
core.v1.PodDNSConfig
 nameservers [a]s
 options [a]@core.v1.PodDNSConfigOption
 searches [a]s
core.v1.EphemeralContainer
 args [a]s
 command [a]s
 env [m:name]@core.v1.EnvVar
 envFrom [a]@core.v1.EnvFromSource
 image s
 imagePullPolicy s
 lifecycle @core.v1.Lifecycle
 livenessProbe @core.v1.Probe
 name s d:\"\"
 ports [m:containerPort,protocol]@core.v1.ContainerPort
 readinessProbe @core.v1.Probe
 resizePolicy [a]@core.v1.ContainerResizePolicy
 resources @core.v1.ResourceRequirements
 restartPolicy s
 restartPolicyRules [a]@core.v1.ContainerRestartRule
 securityContext @core.v1.SecurityContext
 startupProbe @core.v1.Probe
 stdin s
 stdinOnce s
 targetContainerName s
 terminationMessagePath s
 terminationMessagePolicy s
 tty s
 volumeDevices [m:devicePath]@core.v1.VolumeDevice
 volumeMounts [m:mountPath]@core.v1.VolumeMount
 workingDir s
core.v1.EvictionResponder atomic
 name s d:\"\"
 priority s
core.v1.HostAlias
 hostnames [a]s
 ip s d:\"\"
core.v1.PodOS
 name s
core.v1.PodReadinessGate
 conditionType s
core.v1.PodResourceClaim
 name s d:\"\"
 resourceClaimName s
 resourceClaimTemplateName s
core.v1.ResourceRequirements
 claims [m:name]@core.v1.ResourceClaim
 limits {}s
 requests {}s
core.v1.PodSchedulingGate
 name s d:\"\"
core.v1.PodSchedulingGroup
 podGroupName s
core.v1.PodSecurityContext
 appArmorProfile @core.v1.AppArmorProfile
 fsGroup s
 fsGroupChangePolicy s
 runAsGroup s
 runAsNonRoot s
 runAsUser s
 seLinuxChangePolicy s
 seLinuxOptions @core.v1.SELinuxOptions
 seccompProfile @core.v1.SeccompProfile
 supplementalGroups [a]s
 supplementalGroupsPolicy s
 sysctls [a]@core.v1.Sysctl
 windowsOptions @core.v1.WindowsSecurityContextOptions
core.v1.Toleration
 effect s
 key s
 operator s
 tolerationSeconds s
 value s
core.v1.TopologySpreadConstraint
 labelSelector @meta.v1.LabelSelector
 matchLabelKeys [a]s
 maxSkew s
 minDomains s
 nodeAffinityPolicy s
 nodeTaintsPolicy s
 topologyKey s d:\"\"
 whenUnsatisfiable s d:\"\"
core.v1.Volume
 awsElasticBlockStore @core.v1.AWSElasticBlockStoreVolumeSource
 azureDisk @core.v1.AzureDiskVolumeSource
 azureFile @core.v1.AzureFileVolumeSource
 cephfs @core.v1.CephFSVolumeSource
 cinder @core.v1.CinderVolumeSource
 configMap @core.v1.ConfigMapVolumeSource
 csi @core.v1.CSIVolumeSource
 downwardAPI @core.v1.DownwardAPIVolumeSource
 emptyDir @core.v1.EmptyDirVolumeSource
 ephemeral @core.v1.EphemeralVolumeSource
 fc @core.v1.FCVolumeSource
 flexVolume @core.v1.FlexVolumeSource
 flocker @core.v1.FlockerVolumeSource
 gcePersistentDisk @core.v1.GCEPersistentDiskVolumeSource
 gitRepo @core.v1.GitRepoVolumeSource
 glusterfs @core.v1.GlusterfsVolumeSource
 hostPath @core.v1.HostPathVolumeSource
 image @core.v1.ImageVolumeSource
 iscsi @core.v1.ISCSIVolumeSource
 name s d:\"\"
 nfs @core.v1.NFSVolumeSource
 persistentVolumeClaim @core.v1.PersistentVolumeClaimVolumeSource
 photonPersistentDisk @core.v1.PhotonPersistentDiskVolumeSource
 portworxVolume @core.v1.PortworxVolumeSource
 projected @core.v1.ProjectedVolumeSource
 quobyte @core.v1.QuobyteVolumeSource
 rbd @core.v1.RBDVolumeSource
 scaleIO @core.v1.ScaleIOVolumeSource
 secret @core.v1.SecretVolumeSource
 storageos @core.v1.StorageOSVolumeSource
 vsphereVolume @core.v1.VsphereVirtualDiskVolumeSource
core.v1.PodCondition
 lastProbeTime s
 lastTransitionTime s
 message s
 observedGeneration s
 reason s
 status s
 type s d:\"\"
core.v1.ContainerStatus
 allocatedResources {}s
 allocatedResourcesStatus [m:name]@core.v1.ResourceStatus p:merge:name
 containerID s
 image s
 imageID s
 lastState @core.v1.ContainerState =
 name s
 ready s
 resources @core.v1.ResourceRequirements
 restartCount s
 started s
 state @core.v1.ContainerState =
 stopSignal s
 user @core.v1.ContainerUser
 volumeMounts [m:mountPath]@core.v1.VolumeMountStatus p:merge:mountPath
core.v1.PodExtendedResourceClaimStatus
 requestMappings [a]@core.v1.ContainerExtendedResourceRequest ~
 resourceClaimName s
core.v1.HostIP
 ip s
core.v1.NodeAllocatableResourceClaimStatus
 containers [s]s
 mapping [m:name]@core.v1.NodeAllocatableMappedResources p:merge:name
 overhead [m:name]@core.v1.NodeAllocatableOverheadResources p:merge:name
 resourceClaimName s d:\"\"
core.v1.PodIP
 ip s d:\"\"
core.v1.PodResourceClaimStatus
 name s d:\"\"
 resourceClaimName s
core.v1.PodVolumeHealth
 healthConditions [m:status,reason]@core.v1.VolumeHealthCondition p:merge:status
 lastTransitionTime s
 name s d:\"\"
core.v1.ReplicationControllerCondition
 lastTransitionTime s
 message s
 reason s
 status s
 type s d:\"\"
core.v1.ScopeSelector atomic
 matchExpressions [a]@core.v1.ScopedResourceSelectorRequirement
core.v1.ServicePort
 appProtocol s
 name s
 nodePort s
 port s d:0
 protocol s d:\"TCP\"
 targetPort s
core.v1.SessionAffinityConfig
 clientIP @core.v1.ClientIPConfig
core.v1.LoadBalancerStatus
 ingress [a]@core.v1.LoadBalancerIngress
discovery.v1.EndpointConditions
 ready s
 serving s
 terminating s
discovery.v1.EndpointHints
 forNodes [a]@discovery.v1.ForNode
 forZones [a]@discovery.v1.ForZone
networking.v1.ParentReference
 group s
 name s
 namespace s
 resource s
networking.v1.IngressBackend
 resource @core.v1.TypedLocalObjectReference
 service @networking.v1.IngressServiceBackend
networking.v1.IngressRule
 host s
 http @networking.v1.HTTPIngressRuleValue
networking.v1.IngressTLS
 hosts [a]s
 secretName s
networking.v1.IngressLoadBalancerStatus
 ingress [a]@networking.v1.IngressLoadBalancerIngress
networking.v1.IngressClassParametersReference
 apiGroup s
 kind s
 name s
 namespace s
 scope s
networking.v1.NetworkPolicyEgressRule
 ports [a]@networking.v1.NetworkPolicyPort
 to [a]@networking.v1.NetworkPolicyPeer
networking.v1.NetworkPolicyIngressRule
 from [a]@networking.v1.NetworkPolicyPeer
 ports [a]@networking.v1.NetworkPolicyPort
meta.v1.Preconditions
 resourceVersion s
 uid s
storage.v1.TokenRequest
 audience s
 expirationSeconds s
storage.v1.CSINodeDriver
 allocatable @storage.v1.VolumeNodeResources
 name s d:\"\"
 nodeID s
 topologyKeys [a]s ~
storage.v1.StorageHealth
 healthConditions [a]@storage.v1.StorageHealthCondition
 name s d:\"\"
meta.v1.LabelSelectorRequirement
 key s
 operator s
 values [a]s
core.v1.TopologySelectorLabelRequirement
 key s
 values [a]s ~
storage.v1.VolumeAttachmentSource
 inlineVolumeSpec @core.v1.PersistentVolumeSpec
 persistentVolumeName s
storage.v1.VolumeError
 errorCode s
 message s
 time s
apps.v1.RollingUpdateDaemonSet
 maxSurge s
 maxUnavailable s
apps.v1.RollingUpdateDeployment
 maxSurge s
 maxUnavailable s
apps.v1.RollingUpdateStatefulSetStrategy
 maxUnavailable s
 partition s
autoscaling.v2.HPAScalingRules
 policies [a]@autoscaling.v2.HPAScalingPolicy
 selectPolicy s
 stabilizationWindowSeconds s
 tolerance s
autoscaling.v2.ContainerResourceMetricSource
 container s
 name s
 target @autoscaling.v2.MetricTarget =
autoscaling.v2.ExternalMetricSource
 metric @autoscaling.v2.MetricIdentifier =
 target @autoscaling.v2.MetricTarget =
autoscaling.v2.ObjectMetricSource
 describedObject @autoscaling.v2.CrossVersionObjectReference =
 metric @autoscaling.v2.MetricIdentifier =
 target @autoscaling.v2.MetricTarget =
autoscaling.v2.PodsMetricSource
 metric @autoscaling.v2.MetricIdentifier =
 target @autoscaling.v2.MetricTarget =
autoscaling.v2.ResourceMetricSource
 name s
 target @autoscaling.v2.MetricTarget =
autoscaling.v2.ContainerResourceMetricStatus
 container s
 current @autoscaling.v2.MetricValueStatus =
 name s
autoscaling.v2.ExternalMetricStatus
 current @autoscaling.v2.MetricValueStatus =
 metric @autoscaling.v2.MetricIdentifier =
autoscaling.v2.ObjectMetricStatus
 current @autoscaling.v2.MetricValueStatus =
 describedObject @autoscaling.v2.CrossVersionObjectReference =
 metric @autoscaling.v2.MetricIdentifier =
autoscaling.v2.PodsMetricStatus
 current @autoscaling.v2.MetricValueStatus =
 metric @autoscaling.v2.MetricIdentifier =
autoscaling.v2.ResourceMetricStatus
 current @autoscaling.v2.MetricValueStatus =
 name s
batch.v1.PodFailurePolicyRule
 action s
 onExitCodes @batch.v1.PodFailurePolicyOnExitCodesRequirement
 onPodConditions [a]@batch.v1.PodFailurePolicyOnPodConditionsPattern
scheduling.v1alpha3.WorkloadPodGroupDisruptionMode
 all ?
 single ?
scheduling.v1alpha3.WorkloadPodGroupResourceClaim
 name s d:\"\"
 resourceClaimName s
 resourceClaimTemplateName s
scheduling.v1alpha3.WorkloadPodGroupSchedulingConstraints
 topology [a]@scheduling.v1alpha3.TopologyConstraint
scheduling.v1alpha3.WorkloadPodGroupSchedulingPolicy
 basic ?
 gang @scheduling.v1alpha3.WorkloadPodGroupGangSchedulingPolicy
batch.v1.SuccessPolicyRule
 succeededCount s
 succeededIndexes s
core.v1.ConfigMapNodeConfigSource
 kubeletConfigKey s
 name s
 namespace s
 resourceVersion s
 uid s
core.v1.DaemonEndpoint
 Port s
core.v1.NodeSwapStatus
 capacity s
core.v1.NodeRuntimeHandlerFeatures
 recursiveReadOnlyMounts s
 userNamespaces s
core.v1.SecretReference atomic
 name s
 namespace s
core.v1.NodeSelector atomic
 nodeSelectorTerms [a]@core.v1.NodeSelectorTerm ~
core.v1.VolumeHealthCondition
 message s
 reason s d:\"\"
 status s d:\"\"
core.v1.NodeAffinity
 preferredDuringSchedulingIgnoredDuringExecution [a]@core.v1.PreferredSchedulingTerm
 requiredDuringSchedulingIgnoredDuringExecution @core.v1.NodeSelector
core.v1.PodAffinity
 preferredDuringSchedulingIgnoredDuringExecution [a]@core.v1.WeightedPodAffinityTerm
 requiredDuringSchedulingIgnoredDuringExecution [a]@core.v1.PodAffinityTerm
core.v1.PodAntiAffinity
 preferredDuringSchedulingIgnoredDuringExecution [a]@core.v1.WeightedPodAffinityTerm
 requiredDuringSchedulingIgnoredDuringExecution [a]@core.v1.PodAffinityTerm
core.v1.EnvVar
 name s d:\"\"
 value s
 valueFrom @core.v1.EnvVarSource
core.v1.EnvFromSource
 configMapRef @core.v1.ConfigMapEnvSource
 prefix s
 secretRef @core.v1.SecretEnvSource
core.v1.Lifecycle
 postStart @core.v1.LifecycleHandler
 preStop @core.v1.LifecycleHandler
 stopSignal s
core.v1.Probe
 exec @core.v1.ExecAction
 failureThreshold s
 grpc @core.v1.GRPCAction
 httpGet @core.v1.HTTPGetAction
 initialDelaySeconds s
 periodSeconds s
 successThreshold s
 tcpSocket @core.v1.TCPSocketAction
 terminationGracePeriodSeconds s
 timeoutSeconds s
core.v1.ContainerPort
 containerPort s d:0
 hostIP s
 hostPort s
 name s
 protocol s d:\"TCP\"
core.v1.ContainerResizePolicy
 resourceName s
 restartPolicy s
core.v1.ContainerRestartRule
 action s
 exitCodes @core.v1.ContainerRestartRuleOnExitCodes
core.v1.SecurityContext
 allowPrivilegeEscalation s
 appArmorProfile @core.v1.AppArmorProfile
 capabilities @core.v1.Capabilities
 privileged s
 procMount s
 readOnlyRootFilesystem s
 runAsGroup s
 runAsNonRoot s
 runAsUser s
 seLinuxOptions @core.v1.SELinuxOptions
 seccompProfile @core.v1.SeccompProfile
 windowsOptions @core.v1.WindowsSecurityContextOptions
core.v1.VolumeDevice
 devicePath s d:\"\"
 name s
core.v1.VolumeMount
 bindMountOptions [s]s
 mountPath s d:\"\"
 mountPropagation s
 name s
 readOnly s
 recursiveReadOnly s
 subPath s
 subPathExpr s
core.v1.PodDNSConfigOption
 name s
 value s
core.v1.ResourceClaim
 name s d:\"\"
 request s
core.v1.AppArmorProfile
 localhostProfile s
 type s
core.v1.SELinuxOptions
 level s
 role s
 type s
 user s
core.v1.SeccompProfile
 localhostProfile s
 type s
core.v1.Sysctl
 name s
 value s
core.v1.WindowsSecurityContextOptions
 gmsaCredentialSpec s
 gmsaCredentialSpecName s
 hostProcess s
 runAsUserName s
core.v1.AzureFileVolumeSource
 readOnly s
 secretName s
 shareName s
core.v1.CephFSVolumeSource
 monitors [a]s ~
 path s
 readOnly s
 secretFile s
 secretRef @core.v1.LocalObjectReference
 user s
core.v1.CinderVolumeSource
 fsType s
 readOnly s
 secretRef @core.v1.LocalObjectReference
 volumeID s
core.v1.ConfigMapVolumeSource
 defaultMode s
 defaultUser s
 items [a]@core.v1.KeyToPath
 name s
 optional s
core.v1.CSIVolumeSource
 driver s
 fsType s
 nodePublishSecretRef @core.v1.LocalObjectReference
 readOnly s
 volumeAttributes {}s
core.v1.DownwardAPIVolumeSource
 defaultMode s
 defaultUser s
 items [a]@core.v1.DownwardAPIVolumeFile
core.v1.EmptyDirVolumeSource
 medium s
 mode s
 sizeLimit s
core.v1.EphemeralVolumeSource
 volumeClaimTemplate @core.v1.PersistentVolumeClaimTemplate
core.v1.FlexVolumeSource
 driver s
 fsType s
 options {}s
 readOnly s
 secretRef @core.v1.LocalObjectReference
core.v1.GitRepoVolumeSource
 directory s
 repository s
 revision s
core.v1.GlusterfsVolumeSource
 endpoints s
 path s
 readOnly s
core.v1.ImageVolumeSource
 pullPolicy s
 reference s
core.v1.ISCSIVolumeSource
 chapAuthDiscovery s
 chapAuthSession s
 fsType s
 initiatorName s
 iqn s
 iscsiInterface s
 lun s
 portals [a]s
 readOnly s
 secretRef @core.v1.LocalObjectReference
 targetPortal s
core.v1.PersistentVolumeClaimVolumeSource
 claimName s
 readOnly s
core.v1.ProjectedVolumeSource
 defaultMode s
 defaultUser s
 sources [a]@core.v1.VolumeProjection ~
core.v1.RBDVolumeSource
 fsType s
 image s
 keyring s
 monitors [a]s ~
 pool s
 readOnly s
 secretRef @core.v1.LocalObjectReference
 user s
core.v1.ScaleIOVolumeSource
 fsType s
 gateway s
 protectionDomain s
 readOnly s
 secretRef @core.v1.LocalObjectReference
 sslEnabled s
 storageMode s
 storagePool s
 system s
 volumeName s
core.v1.SecretVolumeSource
 defaultMode s
 defaultUser s
 items [a]@core.v1.KeyToPath
 optional s
 secretName s
core.v1.StorageOSVolumeSource
 fsType s
 readOnly s
 secretRef @core.v1.LocalObjectReference
 volumeName s
 volumeNamespace s
core.v1.ResourceStatus
 name s d:\"\"
 resources [m:resourceID]@core.v1.ResourceHealth
core.v1.ContainerState
 running @core.v1.ContainerStateRunning
 terminated @core.v1.ContainerStateTerminated
 waiting @core.v1.ContainerStateWaiting
core.v1.ContainerUser
 linux @core.v1.LinuxContainerUser
core.v1.VolumeMountStatus
 mountPath s d:\"\"
 name s
 readOnly s
 recursiveReadOnly s
 volumeStatus @core.v1.VolumeStatus
core.v1.ContainerExtendedResourceRequest
 containerName s
 requestName s
 resourceName s
core.v1.NodeAllocatableMappedResources
 name s d:\"\"
 quantity s
core.v1.NodeAllocatableOverheadResources
 name s d:\"\"
 perContainer s
 perPod s
core.v1.ScopedResourceSelectorRequirement
 operator s
 scopeName s
 values [a]s
core.v1.ClientIPConfig
 timeoutSeconds s
core.v1.LoadBalancerIngress
 hostname s
 ip s
 ipMode s
 ports [a]@core.v1.PortStatus
discovery.v1.ForNode
 name s
discovery.v1.ForZone
 name s
networking.v1.IngressServiceBackend
 name s
 port @networking.v1.ServiceBackendPort =
networking.v1.HTTPIngressRuleValue
 paths [a]@networking.v1.HTTPIngressPath ~
networking.v1.IngressLoadBalancerIngress
 hostname s
 ip s
 ports [a]@networking.v1.IngressPortStatus
networking.v1.NetworkPolicyPort
 endPort s
 port s
 protocol s
networking.v1.NetworkPolicyPeer
 ipBlock @networking.v1.IPBlock
 namespaceSelector @meta.v1.LabelSelector
 podSelector @meta.v1.LabelSelector
storage.v1.VolumeNodeResources
 count s
storage.v1.StorageHealthCondition
 accessMode s
 lastTransitionTime s
 message s
 reason s
 status s
 volumeMode s
autoscaling.v2.HPAScalingPolicy
 periodSeconds s
 type s
 value s
autoscaling.v2.MetricTarget
 averageUtilization s
 averageValue s
 type s
 value s
autoscaling.v2.MetricIdentifier
 name s
 selector @meta.v1.LabelSelector
autoscaling.v2.MetricValueStatus
 averageUtilization s
 averageValue s
 value s
batch.v1.PodFailurePolicyOnExitCodesRequirement
 containerName s
 operator s
 values [s]s ~
batch.v1.PodFailurePolicyOnPodConditionsPattern
 status s
 type s
scheduling.v1alpha3.TopologyConstraint
 key s
scheduling.v1alpha3.WorkloadPodGroupGangSchedulingPolicy
 minCount s
core.v1.NodeSelectorTerm atomic
 matchExpressions [a]@core.v1.NodeSelectorRequirement
 matchFields [a]@core.v1.NodeSelectorRequirement
core.v1.PreferredSchedulingTerm
 preference @core.v1.NodeSelectorTerm =
 weight s
core.v1.WeightedPodAffinityTerm
 podAffinityTerm @core.v1.PodAffinityTerm =
 weight s
core.v1.PodAffinityTerm
 labelSelector @meta.v1.LabelSelector
 matchLabelKeys [a]s
 mismatchLabelKeys [a]s
 namespaceSelector @meta.v1.LabelSelector
 namespaces [a]s
 topologyKey s
core.v1.EnvVarSource
 configMapKeyRef @core.v1.ConfigMapKeySelector
 fieldRef @core.v1.ObjectFieldSelector
 fileKeyRef @core.v1.FileKeySelector
 resourceFieldRef @core.v1.ResourceFieldSelector
 secretKeyRef @core.v1.SecretKeySelector
core.v1.ConfigMapEnvSource
 name s
 optional s
core.v1.SecretEnvSource
 name s
 optional s
core.v1.LifecycleHandler
 exec @core.v1.ExecAction
 httpGet @core.v1.HTTPGetAction
 sleep @core.v1.SleepAction
 tcpSocket @core.v1.TCPSocketAction
core.v1.ExecAction
 command [a]s
core.v1.GRPCAction
 mode s
 port s
 service s
core.v1.HTTPGetAction
 host s
 httpHeaders [a]@core.v1.HTTPHeader
 path s
 port s
 protocol s
 scheme s
core.v1.TCPSocketAction
 host s
 port s
core.v1.ContainerRestartRuleOnExitCodes
 operator s
 values [s]s
core.v1.Capabilities
 add [a]s
 drop [a]s
core.v1.KeyToPath
 key s
 mode s
 path s
 user s
core.v1.DownwardAPIVolumeFile
 fieldRef @core.v1.ObjectFieldSelector
 mode s
 path s
 resourceFieldRef @core.v1.ResourceFieldSelector
 user s
core.v1.PersistentVolumeClaimTemplate
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.PersistentVolumeClaimSpec =
core.v1.VolumeProjection
 clusterTrustBundle @core.v1.ClusterTrustBundleProjection
 configMap @core.v1.ConfigMapProjection
 downwardAPI @core.v1.DownwardAPIProjection
 podCertificate @core.v1.PodCertificateProjection
 secret @core.v1.SecretProjection
 serviceAccountToken @core.v1.ServiceAccountTokenProjection
core.v1.ResourceHealth
 health s
 message s
 resourceID s d:\"\"
core.v1.ContainerStateRunning
 startedAt s
core.v1.ContainerStateTerminated
 containerID s
 exitCode s
 finishedAt s
 message s
 reason s
 signal s
 startedAt s
core.v1.ContainerStateWaiting
 message s
 reason s
core.v1.LinuxContainerUser
 gid s
 supplementalGroups [a]s
 uid s
core.v1.VolumeStatus
 image @core.v1.ImageVolumeStatus
core.v1.PortStatus
 error s
 port s
 protocol s
networking.v1.ServiceBackendPort atomic
 name s
 number s
networking.v1.HTTPIngressPath
 backend @networking.v1.IngressBackend =
 path s
 pathType s
networking.v1.IngressPortStatus
 error s
 port s
 protocol s
networking.v1.IPBlock
 cidr s
 except [a]s
core.v1.NodeSelectorRequirement
 key s
 operator s
 values [a]s
core.v1.ConfigMapKeySelector atomic
 key s
 name s
 optional s
core.v1.ObjectFieldSelector atomic
 apiVersion s
 fieldPath s
core.v1.FileKeySelector atomic
 key s
 optional s
 path s
 volumeName s
core.v1.ResourceFieldSelector atomic
 containerName s
 divisor s
 resource s
core.v1.SecretKeySelector atomic
 key s
 name s
 optional s
core.v1.SleepAction
 seconds s
core.v1.HTTPHeader
 name s
 value s
core.v1.ClusterTrustBundleProjection
 labelSelector @meta.v1.LabelSelector
 name s
 optional s
 path s
 signerName s
 user s
core.v1.ConfigMapProjection
 items [a]@core.v1.KeyToPath
 name s
 optional s
core.v1.DownwardAPIProjection
 items [a]@core.v1.DownwardAPIVolumeFile
core.v1.PodCertificateProjection
 certificateChainPath s
 credentialBundlePath s
 keyPath s
 keyType s
 maxExpirationSeconds s
 signerName s
 user s
 userAnnotations {}s
core.v1.SecretProjection
 items [a]@core.v1.KeyToPath
 name s
 optional s
core.v1.ServiceAccountTokenProjection
 audience s
 expirationSeconds s
 path s
 user s
core.v1.ImageVolumeStatus
 imageRef s
";
