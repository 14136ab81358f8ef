import { Module } from '@nestjs/common';
import { DeleteEnvVarHandler, SetEnvVarsHandler } from './commands/env-var.handlers';
import { EnvVarsController } from './env-vars.controller';
import { GetEnvVarsHandler } from './queries/get-env-vars.query';

/** Env vars (`/env_vars`): per key, handed to every VM it creates at boot (see VmFactory). */
@Module({ controllers: [EnvVarsController], providers: [GetEnvVarsHandler, SetEnvVarsHandler, DeleteEnvVarHandler] })
export class EnvVarsModule {}
