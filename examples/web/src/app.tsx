import { type FormEvent, useMemo, useState } from 'react';
import { Client, type CombinedError, fetchExchange, Provider, useMutation, useQuery } from 'urql';
import type { PetStatus } from './gql/graphql.ts';
import { AddPet, LivePets } from './operations.ts';

/** Where the gateway is: `VITE_GATEWAY_URL`, read by `npm run dev` and `vite build` alike. */
const GATEWAY_URL: string = import.meta.env.VITE_GATEWAY_URL ?? 'http://localhost:4000/graphql';

const STATUSES: PetStatus[] = ['AVAILABLE', 'PENDING', 'SOLD'];

/**
 * The most pets the list shows, and so the most it watches: the contract's largest `limit`. The REST
 * service chooses which pets fill a list (the reference service sends the oldest first), so once the
 * store holds more, a new pet may never arrive: a full list says so.
 */
const LIST_LIMIT = 100;

/**
 * The key comes from the person using the app (here typed in, kept for the tab only), never from
 * the bundle: anything built into a bundle is readable by every visitor.
 */
export function App() {
  const [key, setKey] = useState(() => sessionStorage.getItem('pet-gateway-key') ?? '');
  const client = useMemo(
    () =>
      new Client({
        url: GATEWAY_URL,
        // No document cache: the live list is kept true by the gateway. urql's cache would ask for
        // it again after each `createPet`, opening a second stream beside the first.
        exchanges: [fetchExchange],
        fetchOptions: { headers: { authorization: `Bearer ${key}` } },
        preferGetMethod: false,
      }),
    [key],
  );
  return (
    <main>
      <h1>Pets</h1>
      <label>
        API key{' '}
        <input
          name="key"
          value={key}
          onChange={(event) => {
            sessionStorage.setItem('pet-gateway-key', event.target.value);
            setKey(event.target.value);
          }}
        />
      </label>
      {key ? (
        <Provider value={client}>
          <PetList />
          <CreatePetForm />
        </Provider>
      ) : (
        <p>Enter your API key to see the pets.</p>
      )}
    </main>
  );
}

/**
 * The list, live: the `@live` query's answer is a stream (SSE, which urql's fetch reads), the list
 * now and again whenever it changes (a pet added here at once, one added elsewhere within the
 * gateway's poll), so nothing needs a reload.
 */
function PetList() {
  const [status, setStatus] = useState<PetStatus | ''>('');
  const [{ data, fetching, error }] = useQuery({
    query: LivePets,
    variables: { status: status || null, limit: LIST_LIMIT },
  });
  const full = (data?.pets.length ?? 0) >= LIST_LIMIT;
  return (
    <section>
      <h2>List</h2>
      <label>
        Status{' '}
        <select name="status" value={status} onChange={(event) => setStatus(event.target.value as PetStatus)}>
          <option value="">any</option>
          {STATUSES.map((value) => (
            <option key={value} value={value}>
              {value.toLowerCase()}
            </option>
          ))}
        </select>
      </label>
      {fetching && <p>Loading…</p>}
      {error && <p role="alert">{error.graphQLErrors[0]?.message ?? error.message}</p>}
      {full && (
        <p id="list-full" role="note">
          The list is full: it shows {LIST_LIMIT} pets, the most it can. The store picks which ones, so a new
          pet may not appear here. Pick a status to see fewer.
        </p>
      )}
      <ul aria-label="pets">
        {data?.pets.map((pet) => (
          <li key={pet.id}>
            {pet.name} ({pet.status?.toLowerCase() ?? 'no status'})
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * Every input error the gateway can pin to a field carries `extensions.argument`, its path in the
 * variables (`input.name`): the message goes beside that field; any other error above the form.
 */
function fieldErrors(error: CombinedError | undefined): Record<string, string> {
  const byField: Record<string, string> = {};
  for (const graphQLError of error?.graphQLErrors ?? []) {
    const argument = graphQLError.extensions?.argument;
    byField[typeof argument === 'string' ? argument : 'form'] ??= graphQLError.message;
  }
  if (error?.networkError) byField.form ??= error.networkError.message;
  return byField;
}

function CreatePetForm() {
  const [{ error, fetching }, addPet] = useMutation(AddPet);
  const [created, setCreated] = useState<string>();
  const errors = fieldErrors(error);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const status = String(form.get('status') ?? '');
    const result = await addPet({
      input: {
        name: String(form.get('name') ?? ''),
        categoryId: String(form.get('categoryId') ?? ''),
        ...(status ? { status: status as PetStatus } : {}),
      },
    });
    setCreated(result.data?.createPet?.name);
  };
  return (
    <form onSubmit={submit} aria-label="new pet">
      <h2>New pet</h2>
      {errors.form && <p role="alert">{errors.form}</p>}
      <p>
        <label>
          Name <input name="name" aria-describedby="name-error" />
        </label>{' '}
        <span id="name-error" className="error">
          {errors['input.name']}
        </span>
      </p>
      <p>
        <label>
          Category <input name="categoryId" defaultValue="1" aria-describedby="category-error" />
        </label>{' '}
        <span id="category-error" className="error">
          {errors['input.categoryId']}
        </span>
      </p>
      <p>
        <label>
          Status{' '}
          <select name="status" defaultValue="AVAILABLE">
            {STATUSES.map((value) => (
              <option key={value} value={value}>
                {value.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
      </p>
      <button type="submit" disabled={fetching}>
        Add
      </button>
      {created && !error && <p role="status">Added {created}.</p>}
    </form>
  );
}
