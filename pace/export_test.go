package pace

// HostsKept returns how many hosts' states m holds now, without sweeping:
// the contract test's Home.Hosts.
func (m *Memory) HostsKept() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.hosts)
}
