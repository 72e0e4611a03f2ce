/**
 * Operations of ../shared/spec/extensions.md that openapi.yaml does not describe yet, typed in
 * the shape openapi-typescript generates so the client calls them as it calls the generated
 * ones. None at the moment: every operation the client calls is typed from openapi.yaml.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface PendingPaths {}
