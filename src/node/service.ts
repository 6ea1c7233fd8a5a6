/**
 * The one contract of every long-lived service `src/node` starts (the buyer, seller, gateway,
 * indexer, bootstrap and tunnel relay nodes) and of the processes `svc up` supervises: started by
 * a `start…` function that resolves once it serves, or rejects with nothing left running; stopped
 * by `stop()`, which stops what it started in reverse order and resolves once none of it runs or
 * listens (docs/decisions/186-one-service-contract.md).
 */
export interface RunningService {
  stop(): Promise<void>;
}
