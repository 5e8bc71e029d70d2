/** Resolves on the next turn of the event loop: long synchronous work pauses here so that queued requests run. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
