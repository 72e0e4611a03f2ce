/** Mail (extensions-2.md 2): the templates (pure) and the SMTP transport; the outbox that sends them lives in the domain (mail/). */
export * from './templates';
export * from './transport';
