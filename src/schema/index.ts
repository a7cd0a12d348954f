import { builder } from './builder.ts';
import './pet.ts';

export const schema = builder.toSchema({ sortSchema: true });
