/**
 * @loopwright/core: the primitives the other packages share, so there is one of each.
 * It depends on nothing of ours; everything else may depend on it.
 */
// clock
// backoff
// api-error
// transport
export {};
