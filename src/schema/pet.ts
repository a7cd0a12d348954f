import {
  LIST_LIMIT,
  PET_SUNSET,
  PET_SUNSET_DAY,
  type PetStatus as PetStatusDto,
} from '../contract/animal-store.ts';
import { ROUTES } from '../contract/routes.ts';
import type { LiveEvent } from '../live/watches.ts';
import type { PetDto } from '../upstream/bodies.ts';
import { builder } from './builder.ts';
import { PET_DEPRECATION_REASON, PET_REPLACEMENT_LIMITS } from './deprecation.ts';
import { rethrowForClient, sunset, toGraphQLError } from './errors.ts';
import { int64Argument, int64Key, limitArgument, nameArgument, nameWithin } from './inputs.ts';
import { openLiveList } from './live.ts';
import { fromUpstream, type UpstreamField, writeThrough } from './upstream-field.ts';

export const PetStatus = builder.enumType('PetStatus', {
  description: 'Availability of an animal in the store.',
  values: {
    AVAILABLE: { value: 'available', description: 'On offer.' },
    PENDING: { value: 'pending', description: 'Reserved; a sale is in progress.' },
    SOLD: { value: 'sold', description: 'Sold; no longer on offer.' },
  } as const,
});

/**
 * What a list of pets costs: as many pets as `limit` asks for (the contract's default when it is
 * left out). Each of a pet's fields weighs 1, as its object does.
 */
const PETS_LIST_SIZE = {
  slicingArguments: ['limit'],
  assumedSize: LIST_LIMIT.default,
  requireOneSlicingArgument: false,
};
const WEIGHS_ONE = { cost: { weight: 1 } };

export const Pet = builder.objectType('Pet', {
  description: 'An animal offered in the store.',
  fields: (t) => ({
    id: t.exposeID('id', {
      directives: WEIGHS_ONE,
      description: 'Unique identifier assigned by the store (a 64-bit integer, as a decimal string).',
    }),
    name: t.exposeString('name', { directives: WEIGHS_ONE, description: "The animal's name." }),
    categoryId: t.exposeID('categoryId', {
      directives: WEIGHS_ONE,
      description:
        'Identifier of the category the animal belongs to (a 64-bit integer, as a decimal string).',
    }),
    // Exposed, not resolved: a field without a resolver is read inline by compiled execution,
    // while a resolver costs a call and a ResolveInfo per pet. A missing status reads as null.
    status: t.expose('status', {
      type: PetStatus,
      nullable: true,
      directives: WEIGHS_ONE,
      description: 'Availability status; null when the store has none for this animal.',
    }),
  }),
});

// In the subgraph schema (FEDERATION=on), routers fetch pets by key through `_entities`. A router is
// not a client choosing the deprecated `pet(id)`: it shares that field's loader (same de-duplication,
// same key) but not its resolver, so it records no deprecation notice and is never refused as
// sunset (docs/federation.md). Async, so a bad id fails its own entity, not the batch.
builder.asEntity(Pet, {
  key: builder.selection<{ id: string }>('id'),
  resolveReference: async (reference, ctx) =>
    ctx.loaders.petById.load(int64Key(reference.id)).catch(rethrowForClient),
});

const NewPetInput = builder.inputType('NewPetInput', {
  description: 'An animal to add to the store.',
  fields: (t) => ({
    name: t.string({ required: true, description: "The animal's name." }),
    categoryId: t.id({
      required: true,
      description:
        'Identifier of the category the animal belongs to (a 64-bit integer, as a decimal string).',
    }),
    status: t.field({
      type: PetStatus,
      description: 'Availability status; the store sets none when omitted.',
    }),
  }),
});

// What each root field does upstream, declared once: `fromUpstream` puts each in its field's
// extensions, where compiled plans (execution/plan.ts) read it, and derives the field's resolver.

/** `pets(status, limit)` → `GET /pets?limit=…&status=…`; limit checked against the contract first. */
const listPets: UpstreamField<{ status?: string | null; limit?: number | null }, 'listPets'> = {
  call: 'listPets',
  request: (args) => ({
    limit: limitArgument(args.limit),
    ...(args.status ? { status: args.status as PetStatusDto } : {}),
  }),
};

/** `pet(id)` → `GET /pets/{petId}`: refused after the sunset, noted as a deprecated use when the call goes out. */
const getPet: UpstreamField<{ id: string }, 'getPet'> = {
  call: 'getPet',
  before: (ctx) => {
    if (ctx.now() >= PET_SUNSET) {
      throw sunset(
        `pet(id) was removed on ${PET_SUNSET_DAY} with the upstream GET /pets/{petId}; use pets(status:, limit:).`,
      );
    }
  },
  calling: (ctx) => ctx.deprecations.usePet(),
  request: (args) => int64Argument(args.id, 'id'),
};

/**
 * `createPet(input)` → `POST /pets`, exactly once. What follows a create (cached lists dropped, live
 * lists asked again) is the route's declared `changes`, not this field's.
 */
const createPet = writeThrough<
  { input: { name: string; categoryId: string; status?: string | null } },
  PetDto
>(ROUTES.createPet, {
  request: ({ input }) => ({
    body: {
      name: nameArgument(input.name, 'input.name'),
      categoryId: int64Argument(input.categoryId, 'input.categoryId'),
      ...(input.status ? { status: input.status as PetStatusDto } : {}),
    },
  }),
  within: (request, ctx) => nameWithin(request.body?.name ?? '', ctx.nameMaxLength, 'input.name'),
});

builder.queryType({
  description: 'Reading the animal store.',
  fields: (t) => ({
    pets: t.field({
      type: [Pet],
      description: 'Lists animals, optionally only those with one status (REST `GET /pets`).',
      args: {
        status: t.arg({ type: PetStatus, description: 'Only animals with this status.' }),
        limit: t.arg.int({
          defaultValue: LIST_LIMIT.default,
          description: `Maximum number of animals returned, from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}; default ${LIST_LIMIT.default}.`,
        }),
      },
      directives: { listSize: PETS_LIST_SIZE },
      ...fromUpstream(listPets),
    }),
    pet: t.field({
      type: Pet,
      nullable: true,
      description: `One animal by identifier (REST \`GET /pets/{petId}\`); null, with the store's not-found error, when there is none. ${PET_REPLACEMENT_LIMITS}`,
      deprecationReason: PET_DEPRECATION_REASON,
      args: {
        id: t.arg.id({
          required: true,
          description: 'Identifier of the animal (a 64-bit integer, as a decimal string).',
        }),
      },
      ...fromUpstream(getPet),
    }),
  }),
});

builder.mutationType({
  // Said of the type while no field's route is idempotent (retried then: upstream/retry.ts);
  // test/schema/upstream-field.test.ts holds it to the routes. Each field says what it changes.
  description: 'Changing the animal store. Each mutation is sent to the store exactly once: never retried.',
  fields: (t) => ({
    createPet: t.field({
      type: Pet,
      description:
        'Adds an animal (REST `POST /pets`); its name must not be blank. Answers the animal with the id the store gave it.',
      args: { input: t.arg({ type: NewPetInput, required: true, description: 'The animal to add.' }) },
      ...fromUpstream(createPet),
    }),
  }),
});

builder.subscriptionType({
  description: 'Watching the animal store.',
  fields: (t) => ({
    pets: t.field({
      type: [Pet],
      description: `The animals \`pets(status:, limit:)\` lists: the list as it is now, then the list again each time it changes. The REST service has no events: the gateway asks it again every LIVE_POLL_MS for all who watch the same list with the same key, and at once after a \`createPet\` through the gateway.`,
      args: {
        status: t.arg({ type: PetStatus, description: 'Only animals with this status.' }),
        limit: t.arg.int({
          defaultValue: LIST_LIMIT.default,
          description: `Maximum number of animals in each list, from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}; default ${LIST_LIMIT.default}.`,
        }),
      },
      directives: { listSize: PETS_LIST_SIZE },
      subscribe: (_root, args, ctx) => openLiveList(ctx, listPets.request(args)),
      resolve: (event: LiveEvent) => {
        if ('error' in event) throw toGraphQLError(event.error);
        return event.value;
      },
    }),
  }),
});
