import { Query } from '@nestjs/cqrs';
import type { ShellAuthKeyRequestDto, ShellAuthPublicKeyRequestDto } from '@arbor/contracts';
import type { SignInPage } from '../sign-in-page';

/** An answer whose status is part of the contract (verify-key's 401, verify-public-key's 404 have bodies of their own). */
export interface ShellAuthAnswer<T> {
  status: number;
  body: T;
}

/** POST /api/shell-auth/verify-key: has the link been followed? (the CLI polls it every 3 s). */
export class VerifySignInQuery extends Query<ShellAuthAnswer<object>> {
  constructor(
    readonly body: ShellAuthKeyRequestDto,
    readonly client_address: string,
  ) {
    super();
  }
}

/** POST /api/shell-auth/verify-public-key: whose is this SSH key? */
export class VerifyPublicKeyQuery extends Query<ShellAuthAnswer<object>> {
  constructor(
    readonly body: ShellAuthPublicKeyRequestDto,
    readonly client_address: string,
  ) {
    super();
  }
}

/** GET /arbor/v1/shell-auth/verify?token=…: what the link would confirm (nothing changes). */
export class PreviewSignInQuery extends Query<SignInPage> {
  constructor(readonly token: unknown) {
    super();
  }
}
