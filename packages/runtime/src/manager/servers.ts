/**
 * A controller's HTTP servers as controller-runtime lays them out: the probes (`/healthz`, `/readyz`) on
 * one address and `/metrics` on another, or all three on one when there is no metrics address of its own.
 * Shared by the Manager and by the start-up probes `runController` serves before the Manager runs.
 */
import { startHealthServer, type HealthServer, type HealthServerOptions } from '@loopwright/metrics';

/** Where to listen; `false` serves nothing there. */
export type ServerAddress = { port: number; host?: string } | false;

export interface ServerAddresses {
  /** The probes, with `/metrics` too unless `metricsServer` is given. */
  health: ServerAddress;
  /** `/metrics` on an address of its own (undefined: with the probes; `false`: not at all). */
  metricsServer?: ServerAddress | undefined;
}

/** What every server answers with: the metrics registry, the ready check, extra checks. */
export type ServedContent = Pick<HealthServerOptions, 'registry' | 'isReady' | 'checks'>;

export interface StartedServers {
  /** The probes' server (answering `/metrics` too when there is no metrics server of its own). */
  probes: HealthServer | undefined;
  metrics: HealthServer | undefined;
  /** Closes both. Never rejects. */
  close(): Promise<void>;
}

/**
 * Starts the probes' server, then the metrics server. When the second cannot listen, the first is
 * closed before the error is thrown, so a failed start leaves no port bound.
 */
export async function startServers(
  addresses: ServerAddresses,
  content: ServedContent,
): Promise<StartedServers> {
  const listen = async (address: ServerAddress, serve: HealthServerOptions['serve']) =>
    address === false
      ? undefined
      : startHealthServer({
          ...content,
          port: address.port,
          ...(address.host ? { host: address.host } : {}),
          serve,
        });
  const probes = await listen(addresses.health, addresses.metricsServer === undefined ? 'all' : 'probes');
  const metrics = await listen(addresses.metricsServer ?? false, 'metrics').catch(async (error: unknown) => {
    await probes?.close();
    throw error;
  });
  return {
    probes,
    metrics,
    close: async () => {
      await Promise.all([probes?.close(), metrics?.close()]);
    },
  };
}
