/** The contract's resources as the service holds them: int64 fields are `bigint`, never `number`. */

import { LIST_LIMIT, type PetStatus } from '../contract/animal-store.ts';
import { REFERENCE_NAME } from './names.ts';

export type { PetStatus };

/** NewPet: the body of `POST /pets`. */
export interface NewPetDto {
  name: string;
  categoryId: bigint;
  status?: PetStatus;
}

/** Pet: a NewPet plus the id the service assigned. `status` is omitted (never null) when unset. */
export interface PetDto extends NewPetDto {
  id: bigint;
}

/** A quickstart test message as answered by `POST /quickstart/messages`. */
export interface MessageDto {
  id: string;
  message: string;
  status: 'queued';
  createdAt: string;
}

/** Limits the contract leaves open; docs/reference-service.md documents each value. */
export const LIMITS = {
  /** `GET /pets?limit=` bounds and default (from the contract) */
  listMin: LIST_LIMIT.min,
  listMax: LIST_LIMIT.max,
  listDefault: LIST_LIMIT.default,
  /** `name` length in Unicode code points, after trimming surrounding whitespace (this service's own) */
  nameMin: REFERENCE_NAME.min,
  nameMax: REFERENCE_NAME.max,
  /** quickstart `message` length in Unicode code points */
  messageMin: 1,
  messageMax: 2000,
  /** request body cap in bytes (1 MiB); larger bodies get 413 */
  bodyBytes: 1024 * 1024,
} as const;
