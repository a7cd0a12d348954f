import { PET_STATUSES } from '../contract/animal-store.ts';
import type { NewPetDto } from './model.ts';

const NAMES = [
  'Bella',
  'Max',
  'Luna',
  'Charlie',
  'Lucy',
  'Cooper',
  'Daisy',
  'Milo',
  'Coco',
  'Rocky',
  'Nala',
  'Oliver',
  'Pepper',
  'Simba',
  'Willow',
  'Leo',
  'Zoe',
  'Teddy',
  'Rosie',
  'Bear',
  'Ruby',
  'Duke',
  'Hazel',
  'Finn',
  'Olive',
  'Gus',
  'Mochi',
  'Ziggy',
  'Pickles',
  'Biscuit',
  'Maple',
  'Otis',
  'Pumpkin',
  'Juniper',
  'Sunny',
  'Clover',
];

/** 36 sample pets: 12 per status, categories 1–4, so a first run has something to list and filter. */
export const SAMPLE_PETS: readonly NewPetDto[] = NAMES.map((name, index) => ({
  name,
  categoryId: BigInt((index % 4) + 1),
  status: PET_STATUSES[index % PET_STATUSES.length] ?? 'available',
}));
