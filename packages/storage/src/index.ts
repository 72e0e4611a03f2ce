export { type BucketSettings, createS3Client, ObjectStore, StoreUnavailable } from './object-store';
