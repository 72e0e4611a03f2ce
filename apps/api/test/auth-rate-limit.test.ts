import { signUpUser, startTestStack, type TestStack } from '@sdx/testing';

/** extensions.md 1: failed sign-ins are limited per email (10 in 15 minutes) and per client address (100). */
let stack: TestStack;
beforeEach(async () => {
  stack = await startTestStack();
});
afterEach(async () => {
  await stack.close();
});

const login = (email: string, password: string) => stack.api.post('/v1/auth/login', { body: { email, password } });

it('refuses an email after 10 failures, right password included, whether or not the account exists', async () => {
  const ada = await signUpUser(stack);
  for (const email of [ada.email, 'ghost@example.com']) {
    for (let i = 0; i < 10; i++) expect((await login(i % 2 ? email : email.toUpperCase(), `wrong password ${i}`)).status).toBe(401);
    const limited = await login(email, email === ada.email ? ada.password : 'anything at all');
    expect(limited.status).toBe(429);
    expect(limited.body.detail.error).toBe('rate_limit_exceeded');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
  }
  // Another email from the same address still signs in.
  const grace = await signUpUser(stack);
  expect((await login(grace.email, grace.password)).status).toBe(200);
});

it('a success clears the count of its email', async () => {
  const ada = await signUpUser(stack);
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 9; i++) expect((await login(ada.email, `wrong ${i}`)).status).toBe(401);
    expect((await login(ada.email, ada.password)).status).toBe(200);
  }
});

it('refuses a client address after 100 failures, whatever the email', async () => {
  const ada = await signUpUser(stack);
  for (let i = 0; i < 100; i++) expect((await login(`nobody${i}@example.com`, 'wrong password')).status).toBe(401);
  const limited = await login(ada.email, ada.password);
  expect(limited.status).toBe(429);
  expect(limited.headers['retry-after']).toBeDefined();
});
