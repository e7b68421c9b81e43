/**
 * The reasons of the Events this process records: what users filter on (`kubectl get events
 * --field-selector reason=...`) and alert on, so they are part of its interface, never ad-hoc strings.
 */
export const EventReason = {
  /** Normal, about a Node: initialised from its server (HCCM's reason). */
  Synced: 'Synced',
  /** Warning, about a Node: no server has its providerID's id, or its name; the Node keeps its taint. */
  ServerNotFound: 'ServerNotFound',
  /** Warning, about a Node: kubelet's `--node-ip` is not an address of its server. */
  ProvidedNodeIPNotFound: 'ProvidedNodeIPNotFound',
  /** Warning, about an initialised Node whose addresses cannot be refreshed (the same cause as above). */
  AddressesNotUpdated: 'AddressesNotUpdated',
  /** Normal, about a Node: its server is confirmed gone, so the Node is deleted (HCCM's reason). */
  DeletingNode: 'DeletingNode',
  /**
   * Warning: the Hetzner Cloud API fails (outage, revoked token), about a Node that keeps its taint, or
   * about this controller's Pod while start-up waits for the API.
   */
  HcloudAPIError: 'HcloudAPIError',
} as const;
