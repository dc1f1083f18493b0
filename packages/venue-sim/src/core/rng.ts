/**
 * The seeded generator everything in the simulator draws from (catalogues, book processes, identifiers), so the same
 * seed and options replay the same sequence. One implementation serves the whole project: @depthgate/service-kit.
 */
export { Rng, hashInts } from '@depthgate/service-kit';
