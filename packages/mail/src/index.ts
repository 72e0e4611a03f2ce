/** Mail (extensions-2.md 2): the templates (pure), the SMTP transport and the local dev outbox; the outbox that sends them lives in the domain (mail/). */
export * from './templates';
export * from './transport';
export * from './dev-outbox';
