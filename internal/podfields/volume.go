package podfields

// volumeFields are the fields of spec.volumes[]: the volume types nodelet supports field by
// field, the others as one field each.
func volumeFields() []Field {
	const apiObjects = "cluster mode: static pods may not reference API objects (upstream's rule)."
	fields := []Field{
		honoured("spec.volumes[].name", "TestVolumes", ""),
		honoured("spec.volumes[].hostPath.path", "TestVolumes", "a path with \"..\" is refused."),
		honoured("spec.volumes[].hostPath.type", "TestHostPathTypes", "upstream's checks, messages and creation modes."),
		partly("spec.volumes[].emptyDir.medium", "TestVolumes", Unsupported, "\"\" is a directory on the node's disk, Memory a tmpfs."),
		honoured("spec.volumes[].emptyDir.sizeLimit", "TestClusterLocalStorageEviction", "the size of a Memory emptyDir's tmpfs (TestVolumes); a disk emptyDir used beyond it has its pod evicted, as upstream (static pods, critical, are not)."),
		refused("spec.volumes[].emptyDir.mode", Unsupported, "emptyDirs are 0777, as upstream without the gate."),
		honoured("spec.volumes[].secret.secretName", "TestClusterConfigMapSecretTokenDownwardVolumes", "on a tmpfs, updated when the secret changes; "+apiObjects),
		honoured("spec.volumes[].secret.items", "TestKeyPayloads", "its fields are configMap.items[]'s."),
		honoured("spec.volumes[].secret.defaultMode", "TestSecretVolumeOnTmpfs", ""),
		honoured("spec.volumes[].secret.optional", "TestConfigMapItemsAndOptional", ""),
		refused("spec.volumes[].secret.defaultUser", Unsupported, ""),
		honoured("spec.volumes[].downwardAPI.items[].path", "TestDownwardAPIPayload", ""),
		honoured("spec.volumes[].downwardAPI.items[].fieldRef", "TestDownwardAPIPayload", "updated when labels or annotations change."),
		honoured("spec.volumes[].downwardAPI.items[].resourceFieldRef", "TestDownwardAPIPayload", ""),
		honoured("spec.volumes[].downwardAPI.items[].mode", "TestDownwardAPIPayload", ""),
		refused("spec.volumes[].downwardAPI.items[].user", Unsupported, ""),
		honoured("spec.volumes[].downwardAPI.defaultMode", "TestDownwardAPIVolume", ""),
		refused("spec.volumes[].downwardAPI.defaultUser", Unsupported, ""),
		honoured("spec.volumes[].configMap.name", "TestConfigMapVolume", "updated when the configMap changes; "+apiObjects),
		honoured("spec.volumes[].configMap.items[].key", "TestKeyPayloads", ""),
		honoured("spec.volumes[].configMap.items[].path", "TestKeyPayloads", ""),
		honoured("spec.volumes[].configMap.items[].mode", "TestKeyPayloads", ""),
		refused("spec.volumes[].configMap.items[].user", Unsupported, "also in secret volumes and projected sources."),
		honoured("spec.volumes[].configMap.defaultMode", "TestConfigMapItemsAndOptional", ""),
		honoured("spec.volumes[].configMap.optional", "TestConfigMapItemsAndOptional", ""),
		refused("spec.volumes[].configMap.defaultUser", Unsupported, ""),
		honoured("spec.volumes[].projected.sources[].secret", "TestProjectedVolume", apiObjects),
		honoured("spec.volumes[].projected.sources[].downwardAPI", "TestProjectedVolume", ""),
		honoured("spec.volumes[].projected.sources[].configMap", "TestProjectedVolume", apiObjects),
		honoured("spec.volumes[].projected.sources[].serviceAccountToken.audience", "TestTokenRequestFields", ""),
		honoured("spec.volumes[].projected.sources[].serviceAccountToken.expirationSeconds", "TestTokenRequestFields", "refreshed at 80% of its life, as upstream."),
		honoured("spec.volumes[].projected.sources[].serviceAccountToken.path", "TestProjectedVolume", ""),
		refused("spec.volumes[].projected.sources[].serviceAccountToken.user", Unsupported, ""),
		refused("spec.volumes[].projected.sources[].clusterTrustBundle", Unsupported, ""),
		refused("spec.volumes[].projected.sources[].podCertificate", Unsupported, ""),
		honoured("spec.volumes[].projected.defaultMode", "TestProjectedVolume", ""),
		refused("spec.volumes[].projected.defaultUser", Unsupported, ""),
		honoured("spec.volumes[].image.reference", "TestImageVolume", "mounted read-only by the runtime (containerd 2.1 or later)."),
		honoured("spec.volumes[].image.pullPolicy", "TestImageVolume", ""),
	}
	for _, name := range []string{"gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs", "persistentVolumeClaim",
		"rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile", "vsphereVolume", "quobyte", "azureDisk",
		"photonPersistentDisk", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral"} {
		fields = append(fields, refused("spec.volumes[]."+name, Unsupported, ""))
	}
	return fields
}
