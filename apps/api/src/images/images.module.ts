import { Module } from '@nestjs/common';
import { CreateImageHandler, DeleteImageHandler, SetImageVisibilityHandler, UploadImageHandler } from './commands/image-command.handlers';
import { ImageNames } from './image-names';
import { ImageReadModel } from './image-read-model';
import { ImageVisibilityController } from './image-visibility.controller';
import { ImagesController } from './images.controller';

/** Base images (`/images`): jobs that build them, the list, a name's status, deletion, visibility. */
@Module({
  controllers: [ImagesController, ImageVisibilityController],
  providers: [ImageReadModel, ImageNames, CreateImageHandler, UploadImageHandler, DeleteImageHandler, SetImageVisibilityHandler],
  exports: [ImageReadModel],
})
export class ImagesModule {}
