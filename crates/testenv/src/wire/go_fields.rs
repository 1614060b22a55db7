//! The facts about the Go struct fields of the built-in kinds that k8s-openapi does not carry:
//! whether a field is a pointer, whether its JSON tag has `omitempty` or `omitzero` (which
//! decide what Go's `encoding/json` writes for its zero value), and the name of its type where
//! Go declares one of its own over a string, slice or map (`v1.PullPolicy`, `v1.ResourceList`,
//! `[]v1.Capability`), which Go's decode errors name. The shape of the types (which field is a
//! struct, a slice, a string) comes from [`go_types`](super::go_types).
//!
//! Derived from the Go sources of Kubernetes v1.36.2: every `type X struct` of `k8s.io/api`
//! v0.36.2 (`core/v1`, `apps/v1`, `coordination/v1`, `events/v1`, `admissionregistration/v1`,
//! `autoscaling/v1`, `autoscaling/v2`, `batch/v1`, `certificates/v1`, `discovery/v1`,
//! `flowcontrol/v1`, `networking/v1`, `node/v1`, `policy/v1`, `rbac/v1`, `scheduling/v1`,
//! `storage/v1`: `types.go`), of `k8s.io/apimachinery` v0.36.2 (`pkg/apis/meta/v1/types.go`)
//! and of `k8s.io/kube-aggregator` v0.36.2 (`pkg/apis/apiregistration/v1/types.go`), read
//! field by field (an embedded field with a JSON name as a field, the fields of an embedded
//! struct of the same package tagged `json:",inline"` as its own, `json:"-"` left out).
//! Format, one struct a line: its name qualified by its package's group and version, then its
//! fields by JSON name:
//!
//! ```text
//! <group>.<version>.<Struct> <field>...
//! ```
//!
//! where `name` has `omitempty` and is a pointer, a slice, a map or a basic type (its zero is
//! dropped), `name=` is not a pointer and has no `omitempty`, `*name` is a pointer without
//! `omitempty`, `name?` has `omitempty` and is of a named type that is not a pointer (a struct,
//! which `omitempty` never drops, or a named string, slice or map, which it does), and `name!`
//! has `omitzero`. A field whose type is, or is made of, a named string, slice or map ends with
//! `:` and the type as Go's `reflect.Type.String` writes it (`imagePullPolicy?:v1.PullPolicy`);
//! the named slices and maps are defined in [`NAMED_TYPES`].

use std::collections::HashMap;
use std::sync::LazyLock;

/// The named slice and map types the table's fields use, with what they are made of: the
/// `type X []...` and `type X map[...]...` declarations of the same sources.
pub(super) const NAMED_TYPES: &[(&str, &str)] = &[
    ("v1.ExtraValue", "[]string"),
    ("v1.ResourceList", "map[v1.ResourceName]resource.Quantity"),
    ("v1.Verbs", "[]string"),
];

/// What a field's zero encodes as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tag {
    /// Not a pointer, no `omitempty`: the zero of its type.
    Value,
    /// A pointer without `omitempty`: `null`.
    Pointer,
    /// Not a pointer, with `omitempty`, of a named type: a struct's zero (never dropped by
    /// `omitempty`), else dropped.
    NamedOmitEmpty,
    /// `omitzero`: dropped.
    OmitZero,
    /// A pointer, slice, map or basic type with `omitempty`: dropped.
    OmitEmpty,
}

/// A field of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Field {
    /// How its zero is written.
    pub(super) tag: Tag,
    /// Its Go type's name, where it is not what its shape is called (`v1.PullPolicy`).
    pub(super) go_type: Option<&'static str>,
}

/// The table's fields by struct, then by JSON name.
pub(super) static TABLE: LazyLock<HashMap<&'static str, HashMap<&'static str, Field>>> =
    LazyLock::new(|| {
        GO_FIELDS
            .lines()
            .filter_map(|line| {
                let mut words = line.split(' ');
                let name = words.next().filter(|n| !n.is_empty())?;
                Some((name, words.map(field).collect()))
            })
            .collect()
    });

/// A field of a line of the table: its name and what it says.
fn field(word: &'static str) -> (&'static str, Field) {
    let (word, go_type) = match word.split_once(':') {
        Some((w, t)) => (w, Some(t)),
        None => (word, None),
    };
    let (name, tag) = if let Some(f) = word.strip_prefix('*') {
        (f, Tag::Pointer)
    } else if let Some(f) = word.strip_suffix('?') {
        (f, Tag::NamedOmitEmpty)
    } else if let Some(f) = word.strip_suffix('!') {
        (f, Tag::OmitZero)
    } else if let Some(f) = word.strip_suffix('=') {
        (f, Tag::Value)
    } else {
        (word, Tag::OmitEmpty)
    };
    (name, Field { tag, go_type })
}

/// The field `name` of the struct `qualified` (`apps.v1.DeploymentSpec`), if the table has it.
pub(super) fn lookup(qualified: &str, name: &str) -> Option<Field> {
    TABLE.get(qualified)?.get(name).copied()
}

/// The table (see the module docs for its format).
const GO_FIELDS: &str = "\
admissionregistration.v1.ApplyConfiguration expression\n\
admissionregistration.v1.AuditAnnotation key= valueExpression=\n\
admissionregistration.v1.ExpressionWarning fieldRef= warning=\n\
admissionregistration.v1.JSONPatch expression\n\
admissionregistration.v1.MatchCondition name= expression=\n\
admissionregistration.v1.MatchResources namespaceSelector objectSelector resourceRules excludeResourceRules matchPolicy:v1.MatchPolicyType\n\
admissionregistration.v1.MutatingAdmissionPolicy metadata? spec?\n\
admissionregistration.v1.MutatingAdmissionPolicyBinding metadata? spec?\n\
admissionregistration.v1.MutatingAdmissionPolicyBindingList metadata? items=\n\
admissionregistration.v1.MutatingAdmissionPolicyBindingSpec policyName paramRef matchResources\n\
admissionregistration.v1.MutatingAdmissionPolicyList metadata? items=\n\
admissionregistration.v1.MutatingAdmissionPolicySpec paramKind matchConstraints variables mutations failurePolicy:v1.FailurePolicyType matchConditions reinvocationPolicy?:v1.ReinvocationPolicyType\n\
admissionregistration.v1.MutatingWebhook name= clientConfig= rules failurePolicy:v1.FailurePolicyType matchPolicy:v1.MatchPolicyType namespaceSelector objectSelector *sideEffects:v1.SideEffectClass timeoutSeconds admissionReviewVersions= reinvocationPolicy:v1.ReinvocationPolicyType matchConditions\n\
admissionregistration.v1.MutatingWebhookConfiguration metadata? webhooks\n\
admissionregistration.v1.MutatingWebhookConfigurationList metadata? items=\n\
admissionregistration.v1.Mutation patchType=:v1.PatchType applyConfiguration jsonPatch\n\
admissionregistration.v1.NamedRuleWithOperations resourceNames operations:[]v1.OperationType apiGroups apiVersions resources scope:v1.ScopeType\n\
admissionregistration.v1.ParamKind apiVersion kind\n\
admissionregistration.v1.ParamRef name namespace selector parameterNotFoundAction:v1.ParameterNotFoundActionType\n\
admissionregistration.v1.Rule apiGroups apiVersions resources scope:v1.ScopeType\n\
admissionregistration.v1.RuleWithOperations operations:[]v1.OperationType apiGroups apiVersions resources scope:v1.ScopeType\n\
admissionregistration.v1.ServiceReference namespace= name= path port\n\
admissionregistration.v1.TypeChecking expressionWarnings\n\
admissionregistration.v1.ValidatingAdmissionPolicy metadata? spec? status?\n\
admissionregistration.v1.ValidatingAdmissionPolicyBinding metadata? spec?\n\
admissionregistration.v1.ValidatingAdmissionPolicyBindingList metadata? items=\n\
admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec policyName paramRef matchResources validationActions:[]v1.ValidationAction\n\
admissionregistration.v1.ValidatingAdmissionPolicyList metadata? items=\n\
admissionregistration.v1.ValidatingAdmissionPolicySpec paramKind matchConstraints validations failurePolicy:v1.FailurePolicyType auditAnnotations matchConditions variables\n\
admissionregistration.v1.ValidatingAdmissionPolicyStatus observedGeneration typeChecking conditions\n\
admissionregistration.v1.ValidatingWebhook name= clientConfig= rules failurePolicy:v1.FailurePolicyType matchPolicy:v1.MatchPolicyType namespaceSelector objectSelector *sideEffects:v1.SideEffectClass timeoutSeconds admissionReviewVersions= matchConditions\n\
admissionregistration.v1.ValidatingWebhookConfiguration metadata? webhooks\n\
admissionregistration.v1.ValidatingWebhookConfigurationList metadata? items=\n\
admissionregistration.v1.Validation expression= message reason:v1.StatusReason messageExpression\n\
admissionregistration.v1.Variable name= expression=\n\
admissionregistration.v1.WebhookClientConfig url service caBundle\n\
apiregistration.v1.APIService metadata? spec? status?\n\
apiregistration.v1.APIServiceCondition type=:v1.APIServiceConditionType status=:v1.ConditionStatus lastTransitionTime? reason message\n\
apiregistration.v1.APIServiceList metadata? items=\n\
apiregistration.v1.APIServiceSpec service group version insecureSkipTLSVerify caBundle groupPriorityMinimum= versionPriority=\n\
apiregistration.v1.APIServiceStatus conditions\n\
apiregistration.v1.ServiceReference namespace name port\n\
apps.v1.ControllerRevision metadata? data? revision=\n\
apps.v1.ControllerRevisionList metadata? items=\n\
apps.v1.DaemonSet metadata? spec? status?\n\
apps.v1.DaemonSetCondition type=:v1.DaemonSetConditionType status=:v1.ConditionStatus lastTransitionTime? reason message\n\
apps.v1.DaemonSetList metadata? items=\n\
apps.v1.DaemonSetSpec *selector template= updateStrategy? minReadySeconds revisionHistoryLimit\n\
apps.v1.DaemonSetStatus currentNumberScheduled= numberMisscheduled= desiredNumberScheduled= numberReady= observedGeneration updatedNumberScheduled numberAvailable numberUnavailable collisionCount conditions\n\
apps.v1.DaemonSetUpdateStrategy type?:v1.DaemonSetUpdateStrategyType rollingUpdate\n\
apps.v1.Deployment metadata? spec? status?\n\
apps.v1.DeploymentCondition type=:v1.DeploymentConditionType status=:v1.ConditionStatus lastUpdateTime? lastTransitionTime? reason message\n\
apps.v1.DeploymentList metadata? items=\n\
apps.v1.DeploymentSpec replicas *selector template= strategy? minReadySeconds revisionHistoryLimit paused progressDeadlineSeconds\n\
apps.v1.DeploymentStatus observedGeneration replicas updatedReplicas readyReplicas availableReplicas unavailableReplicas terminatingReplicas conditions collisionCount\n\
apps.v1.DeploymentStrategy type?:v1.DeploymentStrategyType rollingUpdate\n\
apps.v1.ReplicaSet metadata? spec? status?\n\
apps.v1.ReplicaSetCondition type=:v1.ReplicaSetConditionType status=:v1.ConditionStatus lastTransitionTime? reason message\n\
apps.v1.ReplicaSetList metadata? items=\n\
apps.v1.ReplicaSetSpec replicas minReadySeconds *selector template?\n\
apps.v1.ReplicaSetStatus replicas= fullyLabeledReplicas readyReplicas availableReplicas terminatingReplicas observedGeneration conditions\n\
apps.v1.RollingUpdateDaemonSet maxUnavailable maxSurge\n\
apps.v1.RollingUpdateDeployment maxUnavailable maxSurge\n\
apps.v1.RollingUpdateStatefulSetStrategy partition maxUnavailable\n\
apps.v1.StatefulSet metadata? spec? status?\n\
apps.v1.StatefulSetCondition type=:v1.StatefulSetConditionType status=:v1.ConditionStatus lastTransitionTime? reason message\n\
apps.v1.StatefulSetList metadata? items=\n\
apps.v1.StatefulSetOrdinals start=\n\
apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy whenDeleted?:v1.PersistentVolumeClaimRetentionPolicyType whenScaled?:v1.PersistentVolumeClaimRetentionPolicyType\n\
apps.v1.StatefulSetSpec replicas *selector template= volumeClaimTemplates serviceName= podManagementPolicy?:v1.PodManagementPolicyType updateStrategy? revisionHistoryLimit minReadySeconds persistentVolumeClaimRetentionPolicy ordinals\n\
apps.v1.StatefulSetStatus observedGeneration replicas= readyReplicas currentReplicas updatedReplicas currentRevision updateRevision collisionCount conditions availableReplicas=\n\
apps.v1.StatefulSetUpdateStrategy type?:v1.StatefulSetUpdateStrategyType rollingUpdate\n\
autoscaling.v1.ContainerResourceMetricSource name=:v1.ResourceName targetAverageUtilization targetAverageValue container=\n\
autoscaling.v1.ContainerResourceMetricStatus name=:v1.ResourceName currentAverageUtilization currentAverageValue= container=\n\
autoscaling.v1.CrossVersionObjectReference kind= name= apiVersion\n\
autoscaling.v1.ExternalMetricSource metricName= metricSelector targetValue targetAverageValue\n\
autoscaling.v1.ExternalMetricStatus metricName= metricSelector currentValue= currentAverageValue\n\
autoscaling.v1.HorizontalPodAutoscaler metadata? spec? status?\n\
autoscaling.v1.HorizontalPodAutoscalerCondition type=:v1.HorizontalPodAutoscalerConditionType status=:v1.ConditionStatus lastTransitionTime? reason message\n\
autoscaling.v1.HorizontalPodAutoscalerList metadata? items=\n\
autoscaling.v1.HorizontalPodAutoscalerSpec scaleTargetRef= minReplicas maxReplicas= targetCPUUtilizationPercentage\n\
autoscaling.v1.HorizontalPodAutoscalerStatus observedGeneration lastScaleTime currentReplicas= desiredReplicas= currentCPUUtilizationPercentage\n\
autoscaling.v1.MetricSpec type=:v1.MetricSourceType object pods resource containerResource external\n\
autoscaling.v1.MetricStatus type=:v1.MetricSourceType object pods resource containerResource external\n\
autoscaling.v1.ObjectMetricSource target= metricName= targetValue= selector averageValue\n\
autoscaling.v1.ObjectMetricStatus target= metricName= currentValue= selector averageValue\n\
autoscaling.v1.PodsMetricSource metricName= targetAverageValue= selector\n\
autoscaling.v1.PodsMetricStatus metricName= currentAverageValue= selector\n\
autoscaling.v1.ResourceMetricSource name=:v1.ResourceName targetAverageUtilization targetAverageValue\n\
autoscaling.v1.ResourceMetricStatus name=:v1.ResourceName currentAverageUtilization currentAverageValue=\n\
autoscaling.v1.Scale metadata? spec? status?\n\
autoscaling.v1.ScaleSpec replicas\n\
autoscaling.v1.ScaleStatus replicas= selector\n\
autoscaling.v2.ContainerResourceMetricSource name=:v1.ResourceName target= container=\n\
autoscaling.v2.ContainerResourceMetricStatus name=:v1.ResourceName current= container=\n\
autoscaling.v2.CrossVersionObjectReference kind= name= apiVersion\n\
autoscaling.v2.ExternalMetricSource metric= target=\n\
autoscaling.v2.ExternalMetricStatus metric= current=\n\
autoscaling.v2.HPAScalingPolicy type=:v2.HPAScalingPolicyType value= periodSeconds=\n\
autoscaling.v2.HPAScalingRules stabilizationWindowSeconds selectPolicy:v2.ScalingPolicySelect policies tolerance\n\
autoscaling.v2.HorizontalPodAutoscaler metadata? spec? status?\n\
autoscaling.v2.HorizontalPodAutoscalerBehavior scaleUp scaleDown\n\
autoscaling.v2.HorizontalPodAutoscalerCondition type=:v2.HorizontalPodAutoscalerConditionType status=:v1.ConditionStatus lastTransitionTime? reason message\n\
autoscaling.v2.HorizontalPodAutoscalerList metadata? items=\n\
autoscaling.v2.HorizontalPodAutoscalerSpec scaleTargetRef= minReplicas maxReplicas= metrics behavior\n\
autoscaling.v2.HorizontalPodAutoscalerStatus observedGeneration lastScaleTime currentReplicas desiredReplicas= currentMetrics= conditions\n\
autoscaling.v2.MetricIdentifier name= selector\n\
autoscaling.v2.MetricSpec type=:v2.MetricSourceType object pods resource containerResource external\n\
autoscaling.v2.MetricStatus type=:v2.MetricSourceType object pods resource containerResource external\n\
autoscaling.v2.MetricTarget type=:v2.MetricTargetType value averageValue averageUtilization\n\
autoscaling.v2.MetricValueStatus value averageValue averageUtilization\n\
autoscaling.v2.ObjectMetricSource describedObject= target= metric=\n\
autoscaling.v2.ObjectMetricStatus metric= current= describedObject=\n\
autoscaling.v2.PodsMetricSource metric= target=\n\
autoscaling.v2.PodsMetricStatus metric= current=\n\
autoscaling.v2.ResourceMetricSource name=:v1.ResourceName target=\n\
autoscaling.v2.ResourceMetricStatus name=:v1.ResourceName current=\n\
batch.v1.CronJob metadata? spec? status?\n\
batch.v1.CronJobList metadata? items=\n\
batch.v1.CronJobSpec schedule= timeZone startingDeadlineSeconds concurrencyPolicy?:v1.ConcurrencyPolicy suspend jobTemplate= successfulJobsHistoryLimit failedJobsHistoryLimit\n\
batch.v1.CronJobStatus active lastScheduleTime lastSuccessfulTime\n\
batch.v1.Job metadata? spec? status?\n\
batch.v1.JobCondition type=:v1.JobConditionType status=:v1.ConditionStatus lastProbeTime? lastTransitionTime? reason message\n\
batch.v1.JobList metadata? items=\n\
batch.v1.JobSpec parallelism completions activeDeadlineSeconds podFailurePolicy successPolicy backoffLimit backoffLimitPerIndex maxFailedIndexes selector manualSelector template= ttlSecondsAfterFinished completionMode:v1.CompletionMode suspend podReplacementPolicy:v1.PodReplacementPolicy managedBy\n\
batch.v1.JobStatus conditions startTime completionTime active succeeded failed terminating completedIndexes failedIndexes uncountedTerminatedPods ready\n\
batch.v1.JobTemplateSpec metadata? spec?\n\
batch.v1.PodFailurePolicy rules=\n\
batch.v1.PodFailurePolicyOnExitCodesRequirement containerName operator=:v1.PodFailurePolicyOnExitCodesOperator values=\n\
batch.v1.PodFailurePolicyOnPodConditionsPattern type=:v1.PodConditionType status=:v1.ConditionStatus\n\
batch.v1.PodFailurePolicyRule action=:v1.PodFailurePolicyAction onExitCodes onPodConditions\n\
batch.v1.SuccessPolicy rules=\n\
batch.v1.SuccessPolicyRule succeededIndexes succeededCount\n\
batch.v1.UncountedTerminatedPods succeeded:[]types.UID failed:[]types.UID\n\
certificates.v1.CertificateSigningRequest metadata? spec= status?\n\
certificates.v1.CertificateSigningRequestCondition type=:v1.RequestConditionType status=:v1.ConditionStatus reason message lastUpdateTime? lastTransitionTime?\n\
certificates.v1.CertificateSigningRequestList metadata? items=\n\
certificates.v1.CertificateSigningRequestSpec request= signerName= expirationSeconds usages:[]v1.KeyUsage username uid groups extra:map[string]v1.ExtraValue\n\
certificates.v1.CertificateSigningRequestStatus conditions certificate\n\
coordination.v1.Lease metadata? spec?\n\
coordination.v1.LeaseList metadata? items=\n\
coordination.v1.LeaseSpec holderIdentity leaseDurationSeconds acquireTime renewTime leaseTransitions strategy:v1.CoordinatedLeaseStrategy preferredHolder\n\
core.v1.AWSElasticBlockStoreVolumeSource volumeID= fsType partition readOnly\n\
core.v1.Affinity nodeAffinity podAffinity podAntiAffinity\n\
core.v1.AppArmorProfile type=:v1.AppArmorProfileType localhostProfile\n\
core.v1.AttachedVolume name=:v1.UniqueVolumeName devicePath=\n\
core.v1.AvoidPods preferAvoidPods\n\
core.v1.AzureDiskVolumeSource diskName= diskURI= cachingMode:v1.AzureDataDiskCachingMode fsType readOnly kind:v1.AzureDataDiskKind\n\
core.v1.AzureFilePersistentVolumeSource secretName= shareName= readOnly *secretNamespace\n\
core.v1.AzureFileVolumeSource secretName= shareName= readOnly\n\
core.v1.Binding metadata? target=\n\
core.v1.CSIPersistentVolumeSource driver= volumeHandle= readOnly fsType volumeAttributes controllerPublishSecretRef nodeStageSecretRef nodePublishSecretRef controllerExpandSecretRef nodeExpandSecretRef\n\
core.v1.CSIVolumeSource driver= readOnly fsType volumeAttributes nodePublishSecretRef\n\
core.v1.Capabilities add:[]v1.Capability drop:[]v1.Capability\n\
core.v1.CephFSPersistentVolumeSource monitors= path user secretFile secretRef readOnly\n\
core.v1.CephFSVolumeSource monitors= path user secretFile secretRef readOnly\n\
core.v1.CinderPersistentVolumeSource volumeID= fsType readOnly secretRef\n\
core.v1.CinderVolumeSource volumeID= fsType readOnly secretRef\n\
core.v1.ClientIPConfig timeoutSeconds\n\
core.v1.ClusterTrustBundleProjection name signerName labelSelector optional path=\n\
core.v1.ComponentCondition type=:v1.ComponentConditionType status=:v1.ConditionStatus message error\n\
core.v1.ComponentStatus metadata? conditions\n\
core.v1.ComponentStatusList metadata? items=\n\
core.v1.ConfigMap metadata? immutable data binaryData\n\
core.v1.ConfigMapEnvSource name optional\n\
core.v1.ConfigMapKeySelector name key= optional\n\
core.v1.ConfigMapList metadata? items=\n\
core.v1.ConfigMapNodeConfigSource namespace= name= uid?:types.UID resourceVersion kubeletConfigKey=\n\
core.v1.ConfigMapProjection name items optional\n\
core.v1.ConfigMapVolumeSource name items defaultMode optional\n\
core.v1.Container name= image command args workingDir ports envFrom env resources? resizePolicy restartPolicy:v1.ContainerRestartPolicy restartPolicyRules volumeMounts volumeDevices livenessProbe readinessProbe startupProbe lifecycle terminationMessagePath terminationMessagePolicy?:v1.TerminationMessagePolicy imagePullPolicy?:v1.PullPolicy securityContext stdin stdinOnce tty\n\
core.v1.ContainerExtendedResourceRequest containerName= resourceName= requestName=\n\
core.v1.ContainerImage names= sizeBytes\n\
core.v1.ContainerPort name hostPort containerPort= protocol?:v1.Protocol hostIP\n\
core.v1.ContainerResizePolicy resourceName=:v1.ResourceName restartPolicy=:v1.ResourceResizeRestartPolicy\n\
core.v1.ContainerRestartRule action?:v1.ContainerRestartRuleAction exitCodes\n\
core.v1.ContainerRestartRuleOnExitCodes operator?:v1.ContainerRestartRuleOnExitCodesOperator values\n\
core.v1.ContainerState waiting running terminated\n\
core.v1.ContainerStateRunning startedAt?\n\
core.v1.ContainerStateTerminated exitCode= signal reason message startedAt? finishedAt? containerID\n\
core.v1.ContainerStateWaiting reason message\n\
core.v1.ContainerStatus name= state? lastState? ready= restartCount= image= imageID= containerID started allocatedResources?:v1.ResourceList resources volumeMounts user allocatedResourcesStatus stopSignal:v1.Signal\n\
core.v1.ContainerUser linux\n\
core.v1.DaemonEndpoint Port=\n\
core.v1.DownwardAPIProjection items\n\
core.v1.DownwardAPIVolumeFile path= fieldRef resourceFieldRef mode\n\
core.v1.DownwardAPIVolumeSource items defaultMode\n\
core.v1.EmptyDirVolumeSource medium?:v1.StorageMedium sizeLimit\n\
core.v1.EndpointAddress ip= hostname nodeName targetRef\n\
core.v1.EndpointPort name port= protocol?:v1.Protocol appProtocol\n\
core.v1.EndpointSubset addresses notReadyAddresses ports\n\
core.v1.Endpoints metadata? subsets\n\
core.v1.EndpointsList metadata? items=\n\
core.v1.EnvFromSource prefix configMapRef secretRef\n\
core.v1.EnvVar name= value valueFrom\n\
core.v1.EnvVarSource fieldRef resourceFieldRef configMapKeyRef secretKeyRef fileKeyRef\n\
core.v1.EphemeralContainer name= image command args workingDir ports envFrom env resources? resizePolicy restartPolicy:v1.ContainerRestartPolicy restartPolicyRules volumeMounts volumeDevices livenessProbe readinessProbe startupProbe lifecycle terminationMessagePath terminationMessagePolicy?:v1.TerminationMessagePolicy imagePullPolicy?:v1.PullPolicy securityContext stdin stdinOnce tty targetContainerName\n\
core.v1.EphemeralContainerCommon name= image command args workingDir ports envFrom env resources? resizePolicy restartPolicy:v1.ContainerRestartPolicy restartPolicyRules volumeMounts volumeDevices livenessProbe readinessProbe startupProbe lifecycle terminationMessagePath terminationMessagePolicy?:v1.TerminationMessagePolicy imagePullPolicy?:v1.PullPolicy securityContext stdin stdinOnce tty\n\
core.v1.EphemeralVolumeSource volumeClaimTemplate\n\
core.v1.Event metadata= involvedObject= reason message source? firstTimestamp? lastTimestamp? count type eventTime? series action related reportingComponent= reportingInstance=\n\
core.v1.EventList metadata? items=\n\
core.v1.EventSeries count lastObservedTime?\n\
core.v1.EventSource component host\n\
core.v1.ExecAction command\n\
core.v1.FCVolumeSource targetWWNs lun fsType readOnly wwids\n\
core.v1.FileKeySelector volumeName= path= key= optional\n\
core.v1.FlexPersistentVolumeSource driver= fsType secretRef readOnly options\n\
core.v1.FlexVolumeSource driver= fsType secretRef readOnly options\n\
core.v1.FlockerVolumeSource datasetName datasetUUID\n\
core.v1.GCEPersistentDiskVolumeSource pdName= fsType partition readOnly\n\
core.v1.GRPCAction port= *service\n\
core.v1.GitRepoVolumeSource repository= revision directory\n\
core.v1.GlusterfsPersistentVolumeSource endpoints= path= readOnly endpointsNamespace\n\
core.v1.GlusterfsVolumeSource endpoints= path= readOnly\n\
core.v1.HTTPGetAction path port= host scheme?:v1.URIScheme httpHeaders\n\
core.v1.HTTPHeader name= value=\n\
core.v1.HostAlias ip= hostnames\n\
core.v1.HostIP ip=\n\
core.v1.HostPathVolumeSource path= type:v1.HostPathType\n\
core.v1.ISCSIPersistentVolumeSource targetPortal= iqn= lun= iscsiInterface fsType readOnly portals chapAuthDiscovery chapAuthSession secretRef initiatorName\n\
core.v1.ISCSIVolumeSource targetPortal= iqn= lun= iscsiInterface fsType readOnly portals chapAuthDiscovery chapAuthSession secretRef initiatorName\n\
core.v1.ImageVolumeSource reference pullPolicy?:v1.PullPolicy\n\
core.v1.ImageVolumeStatus imageRef\n\
core.v1.KeyToPath key= path= mode\n\
core.v1.Lifecycle postStart preStop stopSignal:v1.Signal\n\
core.v1.LifecycleHandler exec httpGet tcpSocket sleep\n\
core.v1.LimitRange metadata? spec?\n\
core.v1.LimitRangeItem type=:v1.LimitType max?:v1.ResourceList min?:v1.ResourceList default?:v1.ResourceList defaultRequest?:v1.ResourceList maxLimitRequestRatio?:v1.ResourceList\n\
core.v1.LimitRangeList metadata? items=\n\
core.v1.LimitRangeSpec limits=\n\
core.v1.LinuxContainerUser uid= gid= supplementalGroups\n\
core.v1.LoadBalancerIngress ip hostname ipMode:v1.LoadBalancerIPMode ports\n\
core.v1.LoadBalancerStatus ingress\n\
core.v1.LocalObjectReference name\n\
core.v1.LocalVolumeSource path= fsType\n\
core.v1.ModifyVolumeStatus targetVolumeAttributesClassName status=:v1.PersistentVolumeClaimModifyVolumeStatus\n\
core.v1.NFSVolumeSource server= path= readOnly\n\
core.v1.Namespace metadata? spec? status?\n\
core.v1.NamespaceCondition type=:v1.NamespaceConditionType status=:v1.ConditionStatus lastTransitionTime? reason message\n\
core.v1.NamespaceList metadata? items=\n\
core.v1.NamespaceSpec finalizers:[]v1.FinalizerName\n\
core.v1.NamespaceStatus phase?:v1.NamespacePhase conditions\n\
core.v1.Node metadata? spec? status?\n\
core.v1.NodeAddress type=:v1.NodeAddressType address=\n\
core.v1.NodeAffinity requiredDuringSchedulingIgnoredDuringExecution preferredDuringSchedulingIgnoredDuringExecution\n\
core.v1.NodeAllocatableResourceClaimStatus resourceClaimName= containers resources=:map[v1.ResourceName]resource.Quantity\n\
core.v1.NodeCondition type=:v1.NodeConditionType status=:v1.ConditionStatus lastHeartbeatTime? lastTransitionTime? reason message\n\
core.v1.NodeConfigSource configMap\n\
core.v1.NodeConfigStatus assigned active lastKnownGood error\n\
core.v1.NodeDaemonEndpoints kubeletEndpoint?\n\
core.v1.NodeFeatures supplementalGroupsPolicy\n\
core.v1.NodeList metadata? items=\n\
core.v1.NodeProxyOptions path\n\
core.v1.NodeRuntimeHandler name= features\n\
core.v1.NodeRuntimeHandlerFeatures recursiveReadOnlyMounts userNamespaces\n\
core.v1.NodeSelector nodeSelectorTerms=\n\
core.v1.NodeSelectorRequirement key= operator=:v1.NodeSelectorOperator values\n\
core.v1.NodeSelectorTerm matchExpressions matchFields\n\
core.v1.NodeSpec podCIDR podCIDRs providerID unschedulable taints configSource externalID\n\
core.v1.NodeStatus capacity?:v1.ResourceList allocatable?:v1.ResourceList phase?:v1.NodePhase conditions addresses daemonEndpoints? nodeInfo? images volumesInUse:[]v1.UniqueVolumeName volumesAttached config runtimeHandlers features declaredFeatures\n\
core.v1.NodeSwapStatus capacity\n\
core.v1.NodeSystemInfo machineID= systemUUID= bootID= kernelVersion= osImage= containerRuntimeVersion= kubeletVersion= kubeProxyVersion= operatingSystem= architecture= swap\n\
core.v1.ObjectFieldSelector apiVersion fieldPath=\n\
core.v1.ObjectReference kind namespace name uid?:types.UID apiVersion resourceVersion fieldPath\n\
core.v1.PersistentVolume metadata? spec? status?\n\
core.v1.PersistentVolumeClaim metadata? spec? status?\n\
core.v1.PersistentVolumeClaimCondition type=:v1.PersistentVolumeClaimConditionType status=:v1.ConditionStatus lastProbeTime? lastTransitionTime? reason message\n\
core.v1.PersistentVolumeClaimList metadata? items=\n\
core.v1.PersistentVolumeClaimSpec accessModes:[]v1.PersistentVolumeAccessMode selector resources? volumeName storageClassName volumeMode:v1.PersistentVolumeMode dataSource dataSourceRef volumeAttributesClassName\n\
core.v1.PersistentVolumeClaimStatus phase?:v1.PersistentVolumeClaimPhase accessModes:[]v1.PersistentVolumeAccessMode capacity?:v1.ResourceList conditions allocatedResources?:v1.ResourceList allocatedResourceStatuses:map[v1.ResourceName]v1.ClaimResourceStatus currentVolumeAttributesClassName modifyVolumeStatus\n\
core.v1.PersistentVolumeClaimTemplate metadata? spec=\n\
core.v1.PersistentVolumeClaimVolumeSource claimName= readOnly\n\
core.v1.PersistentVolumeList metadata? items=\n\
core.v1.PersistentVolumeSource gcePersistentDisk awsElasticBlockStore hostPath glusterfs nfs rbd iscsi cinder cephfs fc flocker flexVolume azureFile vsphereVolume quobyte azureDisk photonPersistentDisk portworxVolume scaleIO local storageos csi\n\
core.v1.PersistentVolumeSpec capacity?:v1.ResourceList gcePersistentDisk awsElasticBlockStore hostPath glusterfs nfs rbd iscsi cinder cephfs fc flocker flexVolume azureFile vsphereVolume quobyte azureDisk photonPersistentDisk portworxVolume scaleIO local storageos csi accessModes:[]v1.PersistentVolumeAccessMode claimRef persistentVolumeReclaimPolicy?:v1.PersistentVolumeReclaimPolicy storageClassName mountOptions volumeMode:v1.PersistentVolumeMode nodeAffinity volumeAttributesClassName\n\
core.v1.PersistentVolumeStatus phase?:v1.PersistentVolumePhase message reason lastPhaseTransitionTime\n\
core.v1.PhotonPersistentDiskVolumeSource pdID= fsType\n\
core.v1.Pod metadata? spec? status?\n\
core.v1.PodAffinity requiredDuringSchedulingIgnoredDuringExecution preferredDuringSchedulingIgnoredDuringExecution\n\
core.v1.PodAffinityTerm labelSelector namespaces topologyKey= namespaceSelector matchLabelKeys mismatchLabelKeys\n\
core.v1.PodAntiAffinity requiredDuringSchedulingIgnoredDuringExecution preferredDuringSchedulingIgnoredDuringExecution\n\
core.v1.PodAttachOptions stdin stdout stderr tty container\n\
core.v1.PodCertificateProjection signerName keyType maxExpirationSeconds credentialBundlePath keyPath certificateChainPath userAnnotations\n\
core.v1.PodCondition type=:v1.PodConditionType observedGeneration status=:v1.ConditionStatus lastProbeTime? lastTransitionTime? reason message\n\
core.v1.PodDNSConfig nameservers searches options\n\
core.v1.PodDNSConfigOption name value\n\
core.v1.PodExecOptions stdin stdout stderr tty container command=\n\
core.v1.PodExtendedResourceClaimStatus requestMappings= resourceClaimName=\n\
core.v1.PodIP ip=\n\
core.v1.PodList metadata? items=\n\
core.v1.PodLogOptions container follow previous sinceSeconds sinceTime timestamps tailLines limitBytes insecureSkipTLSVerifyBackend stream\n\
core.v1.PodOS name=:v1.OSName\n\
core.v1.PodPortForwardOptions ports\n\
core.v1.PodProxyOptions path\n\
core.v1.PodReadinessGate conditionType=:v1.PodConditionType\n\
core.v1.PodResourceClaim name= resourceClaimName resourceClaimTemplateName\n\
core.v1.PodResourceClaimStatus name= resourceClaimName\n\
core.v1.PodSchedulingGate name=\n\
core.v1.PodSchedulingGroup podGroupName\n\
core.v1.PodSecurityContext seLinuxOptions windowsOptions runAsUser runAsGroup runAsNonRoot supplementalGroups supplementalGroupsPolicy:v1.SupplementalGroupsPolicy fsGroup sysctls fsGroupChangePolicy:v1.PodFSGroupChangePolicy seccompProfile appArmorProfile seLinuxChangePolicy:v1.PodSELinuxChangePolicy\n\
core.v1.PodSignature podController\n\
core.v1.PodSpec volumes initContainers containers= ephemeralContainers restartPolicy?:v1.RestartPolicy terminationGracePeriodSeconds activeDeadlineSeconds dnsPolicy?:v1.DNSPolicy nodeSelector serviceAccountName serviceAccount automountServiceAccountToken nodeName hostNetwork hostPID hostIPC shareProcessNamespace securityContext imagePullSecrets hostname subdomain affinity schedulerName tolerations hostAliases priorityClassName priority dnsConfig readinessGates runtimeClassName enableServiceLinks preemptionPolicy:v1.PreemptionPolicy overhead?:v1.ResourceList topologySpreadConstraints setHostnameAsFQDN os hostUsers schedulingGates resourceClaims resources hostnameOverride schedulingGroup\n\
core.v1.PodStatus observedGeneration phase?:v1.PodPhase conditions message reason nominatedNodeName hostIP hostIPs podIP podIPs startTime initContainerStatuses containerStatuses qosClass?:v1.PodQOSClass ephemeralContainerStatuses resize?:v1.PodResizeStatus resourceClaimStatuses extendedResourceClaimStatus allocatedResources?:v1.ResourceList resources nodeAllocatableResourceClaimStatuses\n\
core.v1.PodStatusResult metadata? status?\n\
core.v1.PodTemplate metadata? template?\n\
core.v1.PodTemplateList metadata? items=\n\
core.v1.PodTemplateSpec metadata? spec?\n\
core.v1.PortStatus port= protocol=:v1.Protocol error\n\
core.v1.PortworxVolumeSource volumeID= fsType readOnly\n\
core.v1.Preconditions uid:types.UID\n\
core.v1.PreferAvoidPodsEntry podSignature= evictionTime? reason message\n\
core.v1.PreferredSchedulingTerm weight= preference=\n\
core.v1.Probe exec httpGet tcpSocket grpc initialDelaySeconds timeoutSeconds periodSeconds successThreshold failureThreshold terminationGracePeriodSeconds\n\
core.v1.ProbeHandler exec httpGet tcpSocket grpc\n\
core.v1.ProjectedVolumeSource sources= defaultMode\n\
core.v1.QuobyteVolumeSource registry= volume= readOnly user group tenant\n\
core.v1.RBDPersistentVolumeSource monitors= image= fsType pool user keyring secretRef readOnly\n\
core.v1.RBDVolumeSource monitors= image= fsType pool user keyring secretRef readOnly\n\
core.v1.RangeAllocation metadata? range= data=\n\
core.v1.ReplicationController metadata? spec? status?\n\
core.v1.ReplicationControllerCondition type=:v1.ReplicationControllerConditionType status=:v1.ConditionStatus lastTransitionTime? reason message\n\
core.v1.ReplicationControllerList metadata? items=\n\
core.v1.ReplicationControllerSpec replicas minReadySeconds selector template\n\
core.v1.ReplicationControllerStatus replicas= fullyLabeledReplicas readyReplicas availableReplicas observedGeneration conditions\n\
core.v1.ResourceClaim name= request\n\
core.v1.ResourceFieldSelector containerName resource= divisor?\n\
core.v1.ResourceHealth resourceID=:v1.ResourceID health?:v1.ResourceHealthStatus message\n\
core.v1.ResourceQuota metadata? spec? status?\n\
core.v1.ResourceQuotaList metadata? items=\n\
core.v1.ResourceQuotaSpec hard?:v1.ResourceList scopes:[]v1.ResourceQuotaScope scopeSelector\n\
core.v1.ResourceQuotaStatus hard?:v1.ResourceList used?:v1.ResourceList\n\
core.v1.ResourceRequirements limits?:v1.ResourceList requests?:v1.ResourceList claims\n\
core.v1.ResourceStatus name=:v1.ResourceName resources\n\
core.v1.SELinuxOptions user role type level\n\
core.v1.ScaleIOPersistentVolumeSource gateway= system= *secretRef sslEnabled protectionDomain storagePool storageMode volumeName fsType readOnly\n\
core.v1.ScaleIOVolumeSource gateway= system= *secretRef sslEnabled protectionDomain storagePool storageMode volumeName fsType readOnly\n\
core.v1.ScopeSelector matchExpressions\n\
core.v1.ScopedResourceSelectorRequirement scopeName=:v1.ResourceQuotaScope operator=:v1.ScopeSelectorOperator values\n\
core.v1.SeccompProfile type=:v1.SeccompProfileType localhostProfile\n\
core.v1.Secret metadata? immutable data stringData type?:v1.SecretType\n\
core.v1.SecretEnvSource name optional\n\
core.v1.SecretKeySelector name key= optional\n\
core.v1.SecretList metadata? items=\n\
core.v1.SecretProjection name items optional\n\
core.v1.SecretReference name namespace\n\
core.v1.SecretVolumeSource secretName items defaultMode optional\n\
core.v1.SecurityContext capabilities privileged seLinuxOptions windowsOptions runAsUser runAsGroup runAsNonRoot readOnlyRootFilesystem allowPrivilegeEscalation procMount:v1.ProcMountType seccompProfile appArmorProfile\n\
core.v1.SerializedReference reference?\n\
core.v1.Service metadata? spec? status?\n\
core.v1.ServiceAccount metadata? secrets imagePullSecrets automountServiceAccountToken\n\
core.v1.ServiceAccountList metadata? items=\n\
core.v1.ServiceAccountTokenProjection audience expirationSeconds path=\n\
core.v1.ServiceList metadata? items=\n\
core.v1.ServicePort name protocol?:v1.Protocol appProtocol port= targetPort? nodePort\n\
core.v1.ServiceProxyOptions path\n\
core.v1.ServiceSpec ports selector clusterIP clusterIPs type?:v1.ServiceType externalIPs sessionAffinity?:v1.ServiceAffinity loadBalancerIP loadBalancerSourceRanges externalName externalTrafficPolicy?:v1.ServiceExternalTrafficPolicy healthCheckNodePort publishNotReadyAddresses sessionAffinityConfig ipFamilies:[]v1.IPFamily ipFamilyPolicy:v1.IPFamilyPolicy allocateLoadBalancerNodePorts loadBalancerClass internalTrafficPolicy:v1.ServiceInternalTrafficPolicy trafficDistribution\n\
core.v1.ServiceStatus loadBalancer? conditions\n\
core.v1.SessionAffinityConfig clientIP\n\
core.v1.SleepAction seconds=\n\
core.v1.StorageOSPersistentVolumeSource volumeName volumeNamespace fsType readOnly secretRef\n\
core.v1.StorageOSVolumeSource volumeName volumeNamespace fsType readOnly secretRef\n\
core.v1.Sysctl name= value=\n\
core.v1.TCPSocketAction port= host\n\
core.v1.Taint key= value effect=:v1.TaintEffect timeAdded\n\
core.v1.Toleration key operator?:v1.TolerationOperator value effect?:v1.TaintEffect tolerationSeconds\n\
core.v1.TopologySelectorLabelRequirement key= values=\n\
core.v1.TopologySelectorTerm matchLabelExpressions\n\
core.v1.TopologySpreadConstraint maxSkew= topologyKey= whenUnsatisfiable=:v1.UnsatisfiableConstraintAction labelSelector minDomains nodeAffinityPolicy:v1.NodeInclusionPolicy nodeTaintsPolicy:v1.NodeInclusionPolicy matchLabelKeys\n\
core.v1.TypedLocalObjectReference *apiGroup kind= name=\n\
core.v1.TypedObjectReference *apiGroup kind= name= namespace\n\
core.v1.Volume name= hostPath emptyDir gcePersistentDisk awsElasticBlockStore gitRepo secret nfs iscsi glusterfs persistentVolumeClaim rbd flexVolume cinder cephfs flocker downwardAPI fc azureFile configMap vsphereVolume quobyte azureDisk photonPersistentDisk projected portworxVolume scaleIO storageos csi ephemeral image\n\
core.v1.VolumeDevice name= devicePath=\n\
core.v1.VolumeMount name= readOnly recursiveReadOnly:v1.RecursiveReadOnlyMode mountPath= subPath mountPropagation:v1.MountPropagationMode subPathExpr\n\
core.v1.VolumeMountStatus name= mountPath= readOnly recursiveReadOnly:v1.RecursiveReadOnlyMode volumeStatus\n\
core.v1.VolumeNodeAffinity required\n\
core.v1.VolumeProjection secret downwardAPI configMap serviceAccountToken clusterTrustBundle podCertificate\n\
core.v1.VolumeResourceRequirements limits?:v1.ResourceList requests?:v1.ResourceList\n\
core.v1.VolumeSource hostPath emptyDir gcePersistentDisk awsElasticBlockStore gitRepo secret nfs iscsi glusterfs persistentVolumeClaim rbd flexVolume cinder cephfs flocker downwardAPI fc azureFile configMap vsphereVolume quobyte azureDisk photonPersistentDisk projected portworxVolume scaleIO storageos csi ephemeral image\n\
core.v1.VolumeStatus image\n\
core.v1.VsphereVirtualDiskVolumeSource volumePath= fsType storagePolicyName storagePolicyID\n\
core.v1.WeightedPodAffinityTerm weight= podAffinityTerm=\n\
core.v1.WindowsSecurityContextOptions gmsaCredentialSpecName gmsaCredentialSpec runAsUserName hostProcess\n\
discovery.v1.Endpoint addresses= conditions? hostname targetRef deprecatedTopology nodeName zone hints\n\
discovery.v1.EndpointConditions ready serving terminating\n\
discovery.v1.EndpointHints forZones forNodes\n\
discovery.v1.EndpointPort name protocol:v1.Protocol port appProtocol\n\
discovery.v1.EndpointSlice metadata? addressType=:v1.AddressType endpoints= ports=\n\
discovery.v1.EndpointSliceList metadata? items=\n\
discovery.v1.ForNode name=\n\
discovery.v1.ForZone name=\n\
events.v1.Event metadata= eventTime= series reportingController reportingInstance action reason regarding? related note type deprecatedSource? deprecatedFirstTimestamp? deprecatedLastTimestamp? deprecatedCount\n\
events.v1.EventList metadata? items=\n\
events.v1.EventSeries count= lastObservedTime=\n\
flowcontrol.v1.ExemptPriorityLevelConfiguration nominalConcurrencyShares lendablePercent\n\
flowcontrol.v1.FlowDistinguisherMethod type=:v1.FlowDistinguisherMethodType\n\
flowcontrol.v1.FlowSchema metadata? spec? status?\n\
flowcontrol.v1.FlowSchemaCondition type?:v1.FlowSchemaConditionType status?:v1.ConditionStatus lastTransitionTime? reason message\n\
flowcontrol.v1.FlowSchemaList metadata? items=\n\
flowcontrol.v1.FlowSchemaSpec priorityLevelConfiguration= matchingPrecedence= distinguisherMethod rules\n\
flowcontrol.v1.FlowSchemaStatus conditions\n\
flowcontrol.v1.GroupSubject name=\n\
flowcontrol.v1.LimitResponse type=:v1.LimitResponseType queuing\n\
flowcontrol.v1.LimitedPriorityLevelConfiguration *nominalConcurrencyShares limitResponse? lendablePercent borrowingLimitPercent\n\
flowcontrol.v1.NonResourcePolicyRule verbs= nonResourceURLs=\n\
flowcontrol.v1.PolicyRulesWithSubjects subjects= resourceRules nonResourceRules\n\
flowcontrol.v1.PriorityLevelConfiguration metadata? spec? status?\n\
flowcontrol.v1.PriorityLevelConfigurationCondition type?:v1.PriorityLevelConfigurationConditionType status?:v1.ConditionStatus lastTransitionTime? reason message\n\
flowcontrol.v1.PriorityLevelConfigurationList metadata? items=\n\
flowcontrol.v1.PriorityLevelConfigurationReference name=\n\
flowcontrol.v1.PriorityLevelConfigurationSpec type=:v1.PriorityLevelEnablement limited exempt\n\
flowcontrol.v1.PriorityLevelConfigurationStatus conditions\n\
flowcontrol.v1.QueuingConfiguration queues= handSize= queueLengthLimit=\n\
flowcontrol.v1.ResourcePolicyRule verbs= apiGroups= resources= clusterScope namespaces=\n\
flowcontrol.v1.ServiceAccountSubject namespace= name=\n\
flowcontrol.v1.Subject kind=:v1.SubjectKind user group serviceAccount\n\
flowcontrol.v1.UserSubject name=\n\
meta.v1.APIGroup kind apiVersion name= versions= preferredVersion? serverAddressByClientCIDRs\n\
meta.v1.APIGroupList kind apiVersion groups=\n\
meta.v1.APIResource name= singularName= namespaced= group version kind= verbs=:v1.Verbs shortNames categories storageVersionHash\n\
meta.v1.APIResourceList kind apiVersion groupVersion= resources=\n\
meta.v1.APIVersions kind apiVersion versions= serverAddressByClientCIDRs=\n\
meta.v1.ApplyOptions kind apiVersion dryRun force= fieldManager=\n\
meta.v1.Condition type= status=:v1.ConditionStatus observedGeneration lastTransitionTime= reason= message=\n\
meta.v1.CreateOptions kind apiVersion dryRun fieldManager fieldValidation\n\
meta.v1.DeleteOptions kind apiVersion gracePeriodSeconds preconditions orphanDependents propagationPolicy:v1.DeletionPropagation dryRun ignoreStoreReadErrorWithClusterBreakingPotential\n\
meta.v1.FieldSelectorRequirement key= operator=:v1.FieldSelectorOperator values\n\
meta.v1.GetOptions kind apiVersion resourceVersion\n\
meta.v1.GroupVersionForDiscovery groupVersion= version=\n\
meta.v1.LabelSelector matchLabels matchExpressions\n\
meta.v1.LabelSelectorRequirement key= operator=:v1.LabelSelectorOperator values\n\
meta.v1.List kind apiVersion metadata? items=\n\
meta.v1.ListMeta selfLink resourceVersion continue remainingItemCount shardInfo\n\
meta.v1.ListOptions kind apiVersion labelSelector fieldSelector watch allowWatchBookmarks resourceVersion resourceVersionMatch?:v1.ResourceVersionMatch timeoutSeconds limit continue sendInitialEvents shardSelector\n\
meta.v1.ManagedFieldsEntry manager operation?:v1.ManagedFieldsOperationType apiVersion time fieldsType fieldsV1 subresource\n\
meta.v1.ObjectMeta name generateName namespace selfLink uid?:types.UID resourceVersion generation creationTimestamp! deletionTimestamp deletionGracePeriodSeconds labels annotations ownerReferences finalizers managedFields\n\
meta.v1.OwnerReference apiVersion= kind= name= uid=:types.UID controller blockOwnerDeletion\n\
meta.v1.PartialObjectMetadata kind apiVersion metadata?\n\
meta.v1.PartialObjectMetadataList kind apiVersion metadata? items=\n\
meta.v1.PatchOptions kind apiVersion dryRun force fieldManager fieldValidation\n\
meta.v1.Preconditions uid:types.UID resourceVersion\n\
meta.v1.RootPaths paths=\n\
meta.v1.ServerAddressByClientCIDR clientCIDR= serverAddress=\n\
meta.v1.ShardInfo selector=\n\
meta.v1.Status kind apiVersion metadata? status message reason?:v1.StatusReason details code\n\
meta.v1.StatusCause reason?:v1.CauseType message field\n\
meta.v1.StatusDetails name group kind uid?:types.UID causes retryAfterSeconds\n\
meta.v1.Table kind apiVersion metadata? columnDefinitions= rows=\n\
meta.v1.TableColumnDefinition name= type= format= description= priority=\n\
meta.v1.TableOptions kind apiVersion includeObject?:v1.IncludeObjectPolicy\n\
meta.v1.TableRow cells=:[]v1.interface{} conditions object?\n\
meta.v1.TableRowCondition type=:v1.RowConditionType status=:v1.ConditionStatus reason message\n\
meta.v1.TypeMeta kind apiVersion\n\
meta.v1.UpdateOptions kind apiVersion dryRun fieldManager fieldValidation\n\
networking.v1.HTTPIngressPath path *pathType:v1.PathType backend=\n\
networking.v1.HTTPIngressRuleValue paths=\n\
networking.v1.IPAddress metadata? spec?\n\
networking.v1.IPAddressList metadata? items=\n\
networking.v1.IPAddressSpec parentRef\n\
networking.v1.IPBlock cidr= except\n\
networking.v1.Ingress metadata? spec? status?\n\
networking.v1.IngressBackend service resource\n\
networking.v1.IngressClass metadata? spec?\n\
networking.v1.IngressClassList metadata? items=\n\
networking.v1.IngressClassParametersReference apiGroup kind= name= *scope namespace\n\
networking.v1.IngressClassSpec controller parameters\n\
networking.v1.IngressList metadata? items=\n\
networking.v1.IngressLoadBalancerIngress ip hostname ports\n\
networking.v1.IngressLoadBalancerStatus ingress\n\
networking.v1.IngressPortStatus port= protocol=:v1.Protocol error\n\
networking.v1.IngressRule host http\n\
networking.v1.IngressRuleValue http\n\
networking.v1.IngressServiceBackend name= port?\n\
networking.v1.IngressSpec ingressClassName defaultBackend tls rules\n\
networking.v1.IngressStatus loadBalancer?\n\
networking.v1.IngressTLS hosts secretName\n\
networking.v1.NetworkPolicy metadata? spec?\n\
networking.v1.NetworkPolicyEgressRule ports to\n\
networking.v1.NetworkPolicyIngressRule ports from\n\
networking.v1.NetworkPolicyList metadata? items=\n\
networking.v1.NetworkPolicyPeer podSelector namespaceSelector ipBlock\n\
networking.v1.NetworkPolicyPort protocol:v1.Protocol port endPort\n\
networking.v1.NetworkPolicySpec podSelector= ingress egress policyTypes:[]v1.PolicyType\n\
networking.v1.ParentReference group resource namespace name\n\
networking.v1.ServiceBackendPort name number\n\
networking.v1.ServiceCIDR metadata? spec? status?\n\
networking.v1.ServiceCIDRList metadata? items=\n\
networking.v1.ServiceCIDRSpec cidrs\n\
networking.v1.ServiceCIDRStatus conditions\n\
node.v1.Overhead podFixed?:v1.ResourceList\n\
node.v1.RuntimeClass metadata? handler= overhead scheduling\n\
node.v1.RuntimeClassList metadata? items=\n\
node.v1.Scheduling nodeSelector tolerations\n\
policy.v1.Eviction metadata? deleteOptions\n\
policy.v1.PodDisruptionBudget metadata? spec? status?\n\
policy.v1.PodDisruptionBudgetList metadata? items=\n\
policy.v1.PodDisruptionBudgetSpec minAvailable selector maxUnavailable unhealthyPodEvictionPolicy:v1.UnhealthyPodEvictionPolicyType\n\
policy.v1.PodDisruptionBudgetStatus observedGeneration disruptedPods disruptionsAllowed= currentHealthy= desiredHealthy= expectedPods= conditions\n\
rbac.v1.AggregationRule clusterRoleSelectors\n\
rbac.v1.ClusterRole metadata? rules= aggregationRule\n\
rbac.v1.ClusterRoleBinding metadata? subjects roleRef=\n\
rbac.v1.ClusterRoleBindingList metadata? items=\n\
rbac.v1.ClusterRoleList metadata? items=\n\
rbac.v1.PolicyRule verbs= apiGroups resources resourceNames nonResourceURLs\n\
rbac.v1.Role metadata? rules=\n\
rbac.v1.RoleBinding metadata? subjects roleRef=\n\
rbac.v1.RoleBindingList metadata? items=\n\
rbac.v1.RoleList metadata? items=\n\
rbac.v1.RoleRef apiGroup= kind= name=\n\
rbac.v1.Subject kind= apiGroup name= namespace\n\
scheduling.v1.PriorityClass metadata? value= globalDefault description preemptionPolicy:v1.PreemptionPolicy\n\
scheduling.v1.PriorityClassList metadata? items=\n\
storage.v1.CSIDriver metadata? spec=\n\
storage.v1.CSIDriverList metadata? items=\n\
storage.v1.CSIDriverSpec attachRequired podInfoOnMount volumeLifecycleModes:[]v1.VolumeLifecycleMode storageCapacity fsGroupPolicy:v1.FSGroupPolicy tokenRequests requiresRepublish seLinuxMount nodeAllocatableUpdatePeriodSeconds serviceAccountTokenInSecrets preventPodSchedulingIfMissing\n\
storage.v1.CSINode metadata? spec=\n\
storage.v1.CSINodeDriver name= nodeID= topologyKeys= allocatable\n\
storage.v1.CSINodeList metadata? items=\n\
storage.v1.CSINodeSpec drivers=\n\
storage.v1.CSIStorageCapacity metadata? nodeTopology storageClassName= capacity maximumVolumeSize\n\
storage.v1.CSIStorageCapacityList metadata? items=\n\
storage.v1.StorageClass metadata? provisioner= parameters reclaimPolicy:v1.PersistentVolumeReclaimPolicy mountOptions allowVolumeExpansion volumeBindingMode:v1.VolumeBindingMode allowedTopologies\n\
storage.v1.StorageClassList metadata? items=\n\
storage.v1.TokenRequest audience= expirationSeconds\n\
storage.v1.VolumeAttachment metadata? spec= status?\n\
storage.v1.VolumeAttachmentList metadata? items=\n\
storage.v1.VolumeAttachmentSource persistentVolumeName inlineVolumeSpec\n\
storage.v1.VolumeAttachmentSpec attacher= source= nodeName=\n\
storage.v1.VolumeAttachmentStatus attached= attachmentMetadata attachError detachError\n\
storage.v1.VolumeAttributesClass metadata? driverName= parameters\n\
storage.v1.VolumeAttributesClassList metadata? items=\n\
storage.v1.VolumeError time? message errorCode\n\
storage.v1.VolumeNodeResources count\n\
";
