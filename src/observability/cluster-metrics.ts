import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

// With WORKERS > 1 a scrape lands on whichever worker the primary hands the connection to. That
// worker asks the primary, which asks every worker for its registry (prom-client's
// AggregatorRegistry) and answers with the sum: one scrape, the whole process tree.

const REQUEST = 'pet-gateway:metrics-request';
const ANSWER = 'pet-gateway:metrics-answer';
/** Above prom-client's own 5 s wait for the workers, so its error arrives first. */
const ANSWER_TIMEOUT_MS = 6_000;

interface MetricsRequest {
  type: typeof REQUEST;
  id: number;
}
interface MetricsAnswer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/** Worker side: answers the primary's requests for this worker's `registry`. */
export function shareMetricsWithPrimary(registry: Registry): void {
  // Constructing it in a worker installs prom-client's answering listener.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

/**
 * Worker side: what `/metrics` serves instead of the local registry, the primary's aggregate over
 * every worker.
 */
export function askPrimaryForMetrics(): () => Promise<string> {
  let next = 0;
  const pending = new Map<number, { resolve(text: string): void; reject(error: Error): void }>();
  process.on('message', (message: MetricsAnswer) => {
    if (message?.type !== ANSWER) return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.text !== undefined) waiter?.resolve(message.text);
    else waiter?.reject(new Error(`cluster metrics: ${message.error ?? 'no answer'}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('cluster metrics: the primary did not answer'));
      }, ANSWER_TIMEOUT_MS);
      pending.set(id, {
        resolve(text) {
          clearTimeout(timer);
          resolve(text);
        },
        reject(error) {
          clearTimeout(timer);
          reject(error);
        },
      });
      process.send?.({ type: REQUEST, id } satisfies MetricsRequest);
    });
}

/** Primary side: answers workers asking for the aggregate of every worker's metrics. */
export function aggregateWorkerMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker: Worker, message: MetricsRequest) => {
    if (message?.type !== REQUEST) return;
    const reply = (answer: Omit<MetricsAnswer, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: ANSWER, id: message.id, ...answer });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: Error) => reply({ error: error.message }),
    );
  });
}
