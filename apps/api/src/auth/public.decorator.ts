import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'arbor:public';
/** The route needs no API key (system version, public repositories, shell-auth). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
