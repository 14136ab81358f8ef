import { Global, Module } from '@nestjs/common';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeyUsageRecorder } from './api-key-usage-recorder';
import { ResourceOwners } from './resource-owners';

/** Who a request is (its key, user and role), what was used when, and who owns what: for the guards and the account endpoints. */
@Global()
@Module({
  providers: [ApiKeyAuthenticator, ApiKeyUsageRecorder, ResourceOwners],
  exports: [ApiKeyAuthenticator, ApiKeyUsageRecorder, ResourceOwners],
})
export class AuthModule {}
