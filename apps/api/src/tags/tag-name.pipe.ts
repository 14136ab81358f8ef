import { Injectable, type PipeTransform } from '@nestjs/common';
import { TAG_NAME_PATTERN } from '../../../../libs/domain/src';
import { HttpError } from '../http/http-error';

/** Tag names in paths follow the naming rule; anything else is a 400 that says the rule. */
@Injectable()
export class TagNamePipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!TAG_NAME_PATTERN.test(value)) throw new HttpError(400, 'tag_name may hold only letters, digits, ".", "_" and "-" (1-64 characters)');
    return value;
  }
}
