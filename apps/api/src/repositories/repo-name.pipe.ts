import { Injectable, type PipeTransform } from '@nestjs/common';
import { NAME_PATTERN, notFound } from '@arbor/domain';

/** A repository name in a path that breaks the naming rule names no repository: 404. */
@Injectable()
export class RepoNamePipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!NAME_PATTERN.test(value)) throw notFound('repository');
    return value;
  }
}
