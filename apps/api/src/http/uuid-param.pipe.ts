import { Injectable, type PipeTransform } from '@nestjs/common';
import { UUID_PATTERN } from '@arbor/domain';
import { HttpError } from './http-error';

/** Path ids must be lowercase-able UUIDs; anything else is a 400 that says so. */
@Injectable()
export class UuidParamPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    const id = value.toLowerCase();
    if (!UUID_PATTERN.test(id)) throw new HttpError(400, `Invalid URL: Cannot parse \`${value}\` as a UUID`);
    return id;
  }
}
