import { Gauge, type Registry } from 'prom-client';

export interface LeaderElectionMetrics {
  /**
   * Sets `leader_election_master_status{name}` to 1 while this process holds the lease `name`, 0
   * otherwise. client-go only reports once a candidate first leads; call `setLeading(name, false)` when
   * the elector starts so standbys export 0 and "no replica leads" is visible as `max by (name) == 0`.
   */
  setLeading(name: string, leading: boolean): void;
}

export function createLeaderElectionMetrics(registry: Registry): LeaderElectionMetrics {
  const status = new Gauge({
    name: 'leader_election_master_status',
    help:
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' " +
      'is the string used to identify the lease. Please make sure to group by name.',
    labelNames: ['name'] as const,
    registers: [registry],
  });
  return {
    setLeading(name, leading) {
      status.set({ name }, leading ? 1 : 0);
    },
  };
}
