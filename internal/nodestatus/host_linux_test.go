package nodestatus

import "testing"

func TestHostMachineOnThisHost(t *testing.T) {
	info, err := NewHostMachine(t.TempDir()).MachineInfo()
	if err != nil {
		t.Fatalf("MachineInfo: %v", err)
	}
	if info.MemoryCapacity <= 0 || info.EphemeralStorageCapacity <= 0 || info.KernelVersion == "" {
		t.Errorf("MachineInfo = %+v, want memory, storage and kernel", info)
	}
}
