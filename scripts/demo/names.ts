/**
 * What the demo creates, by name. Everything namespaced lives in one namespace, and everything carries
 * {@link MANAGED_BY}, so that on a user's cluster the demo recognises (and only ever deletes) its own
 * objects, including the leftovers of a run that was killed before it could clean up.
 */
export const NAMESPACE = 'loopwright-demo';

/** `app.kubernetes.io/managed-by` on every object the demo creates. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'loopwright-demo' } as const;

export const AT_NAME = 'hello';
export const AT_COMMAND = 'echo "hello from the Loopwright demo"';
/** The requirement: the At is due this long after it is applied. */
export const AT_DELAY_MS = 10_000;

/** The Cluster and its MailgunCluster share the name, as Cluster API's templates do. */
export const CLUSTER_NAME = 'demo';

/** The Node and the fake Hetzner server behind it: cloud-node matches them by name. */
export const NODE_NAME = 'loopwright-demo-node';
/**
 * cloud-node only sees Nodes with this label (NODE_SELECTOR): on a user's cluster it can never touch
 * (or, as the Node-lifecycle controller, delete) the user's real Nodes.
 */
export const NODE_LABEL = { 'loopwright.dev/demo': 'true' } as const;

export const UNINITIALIZED_TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';

export const MAILGUN_DOMAIN = 'mg.example.com';
export const MAIL_RECIPIENT = 'clusters@example.com';
